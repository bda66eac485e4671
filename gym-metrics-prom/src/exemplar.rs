//! The exemplar of the current OpenTelemetry context (feature `exemplars`):
//! the span `opentelemetry::Context::current()` holds, which
//! `tracing-opentelemetry` sets from the current `tracing` span, when it is
//! valid and sampled.

use gym_metrics_api::backend::Exemplar;
use opentelemetry::trace::TraceContextExt;

/// The current span's trace and span ids, if it is valid and sampled.
pub(crate) fn current() -> Option<Exemplar> {
    let context = opentelemetry::Context::current();
    let span = context.span();
    let span = span.span_context();
    if !span.is_valid() || !span.is_sampled() {
        return None;
    }
    Exemplar::new(span.trace_id().to_bytes(), span.span_id().to_bytes())
}
