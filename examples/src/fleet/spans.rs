//! Each rollout in a span (feature `spans`, on with either backend):
//! `tracing` spans made OpenTelemetry spans by tracing-opentelemetry, under
//! a tracer provider that samples every one and exports none. Entering a
//! span makes its OpenTelemetry context current, so a `RolloutTimer`
//! started inside it takes the span's trace id as its exemplar (on prom),
//! and the agent logs that id at debug level for an exemplar to lead to.
//! The agent sends the span as the W3C `traceparent` of its `/verify` call;
//! the resources server's layer makes it current there, so verifications
//! carry the rollout's trace too. The noop build times its rollouts with no
//! span.

use gym_metrics_api::RolloutTimer;

#[cfg(feature = "spans")]
pub use with_spans::{install, rollout, traceparent};

/// What [`install`] returns without spans: nothing to keep.
#[cfg(not(feature = "spans"))]
pub struct NoSpans;

/// Nothing to install without spans.
#[cfg(not(feature = "spans"))]
pub fn install() -> NoSpans {
    NoSpans
}

/// Starts timing one rollout (no span without the feature).
#[cfg(not(feature = "spans"))]
pub fn rollout(_task_id: u64) -> RolloutTimer {
    RolloutTimer::start()
}

/// No `traceparent` without spans.
#[cfg(not(feature = "spans"))]
pub fn traceparent(_rollout: &RolloutTimer) -> Option<String> {
    None
}

#[cfg(feature = "spans")]
mod with_spans {
    use opentelemetry::trace::{SpanContext, TraceContextExt, TracerProvider};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    use tracing_subscriber::layer::SubscriberExt;

    use super::RolloutTimer;
    use crate::fleet::accept::LOG_TARGET;

    /// Installs the spans' subscriber for this process; the provider it
    /// returns must live as long as the spans.
    pub fn install() -> SdkTracerProvider {
        let provider = SdkTracerProvider::builder().build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("gym-fleet"));
        let subscriber = tracing_subscriber::registry().with(layer);
        // Another subscriber set first keeps its place: the rollouts then
        // carry no trace id, and nothing else changes.
        if tracing::subscriber::set_global_default(subscriber).is_err() {
            log::warn!("a tracing subscriber is set already: rollouts carry no trace id");
        }
        provider
    }

    /// Starts timing one rollout in a span of its own, and logs its trace
    /// id at debug level; the span ends when the pair is dropped.
    pub fn rollout(task_id: u64) -> (tracing::Span, RolloutTimer) {
        let span = tracing::info_span!("gym.rollout", task_id);
        let timer = span.in_scope(RolloutTimer::start);
        if log::log_enabled!(target: LOG_TARGET, log::Level::Debug) {
            if let Some(ids) = ids(&span) {
                let trace_id = ids.trace_id();
                log::debug!(target: LOG_TARGET, "rollout {task_id:#x} is trace {trace_id}");
            }
        }
        (span, timer)
    }

    /// The rollout's span as a W3C `traceparent` header value, if it has
    /// a valid one.
    pub fn traceparent(rollout: &(tracing::Span, RolloutTimer)) -> Option<String> {
        let ids = ids(&rollout.0)?;
        let flags = ids.trace_flags().to_u8();
        Some(format!(
            "00-{}-{}-{flags:02x}",
            ids.trace_id(),
            ids.span_id()
        ))
    }

    /// The OpenTelemetry ids of `span`, if valid.
    fn ids(span: &tracing::Span) -> Option<SpanContext> {
        let ids = span.context().span().span_context().clone();
        ids.is_valid().then_some(ids)
    }
}
