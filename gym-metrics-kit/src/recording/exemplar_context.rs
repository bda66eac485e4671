//! The exemplar of the current OpenTelemetry context (feature `exemplars`):
//! the span `opentelemetry::Context::current()` holds, which
//! `tracing-opentelemetry` sets from the current `tracing` span, when it is
//! valid (and sampled, under the trace-based filter).
//!
//! `Context::current()` panics once its thread-local is destroyed, as in a
//! thread-local destructor that starts a timer. [`READABLE`] is made after
//! the context's own thread-local (it touches the context first), so it is
//! destroyed before it: while [`READABLE`] is there, the context is too.
//! Whatever is left (a thread whose first timer starts in a destructor that
//! runs after the context is gone) is caught, and yields no exemplar.

use std::panic::{catch_unwind, AssertUnwindSafe};

use gym_metrics_api::backend::Exemplar;
use opentelemetry::trace::TraceContextExt;
use opentelemetry::Context;

/// Present while this thread's OpenTelemetry context can be read.
struct Readable;

impl Drop for Readable {
    // A destructor of its own: the thread-local is then destroyed at thread
    // exit, in the reverse order of first use, before the context's.
    fn drop(&mut self) {}
}

thread_local! {
    static READABLE: Readable = {
        Context::map_current(|_| ());
        Readable
    };
}

/// The current span's trace and span ids, if it is valid (and sampled,
/// when `sampled_only`); none on a thread whose context is gone.
pub(crate) fn current(sampled_only: bool) -> Option<Exemplar> {
    let read = || {
        READABLE
            .try_with(|_| Context::map_current(|c| of(c, sampled_only)))
            .ok()
            .flatten()
    };
    catch_unwind(AssertUnwindSafe(read)).ok().flatten()
}

/// The exemplar of `context`'s span.
fn of(context: &Context, sampled_only: bool) -> Option<Exemplar> {
    let span = context.span();
    let span = span.span_context();
    if !span.is_valid() || (sampled_only && !span.is_sampled()) {
        return None;
    }
    Exemplar::new(span.trace_id().to_bytes(), span.span_id().to_bytes())
}
