//! Each rollout in a span: `tracing` spans made OpenTelemetry spans by
//! tracing-opentelemetry, under a tracer provider that samples every one
//! and exports none. Entering a span makes its OpenTelemetry context
//! current, so a `RolloutTimer` started inside it takes the span's trace id
//! as its exemplar (on prom), and the agent logs that id (at debug level)
//! for an exemplar to lead to.

use opentelemetry::trace::{TraceContextExt, TracerProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// Installs the spans' subscriber for this process; the provider it
/// returns must live as long as the spans.
pub fn install() -> SdkTracerProvider {
    let provider = SdkTracerProvider::builder().build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("gym-fleet"));
    let subscriber = tracing_subscriber::registry().with(layer);
    // Another subscriber set first (a test harness's) keeps its place: the
    // rollouts then carry no exemplar, and nothing else changes.
    if tracing::subscriber::set_global_default(subscriber).is_err() {
        log::warn!("a tracing subscriber is set already: rollouts carry no trace id");
    }
    provider
}

/// The trace id of `span`, as exemplars and `traceparent` write it; `None`
/// if it has none (no subscriber of ours).
pub fn trace_id(span: &tracing::Span) -> Option<String> {
    let context = span.context();
    let span = context.span();
    let span = span.span_context();
    span.is_valid().then(|| span.trace_id().to_string())
}
