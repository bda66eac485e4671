//! What the otel backend exports for a record made inside a sampled span:
//! no exemplar, because opentelemetry_sdk 0.33 collects none (every
//! aggregation writes an empty list; opentelemetry-rust issue #3369). The
//! histograms are the SDK's own, recorded on the caller's thread, so the
//! day the SDK gains exemplars (pull request #3624, behind the SDK feature
//! `spec_unstable_metrics_exemplars`) and this crate turns them on, this
//! test fails and says what to change.

use crate::support::otlp_json::*;
use crate::support::*;

use gym_metrics_api::backend::Recorder;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;

#[test]
fn a_record_inside_a_sampled_span_exports_no_exemplar_on_sdk_0_33() {
    let buf = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .build()
        .unwrap();
    let trace_id = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    let span = SpanContext::new(
        trace_id,
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    {
        let _attached = Context::current().with_remote_span_context(span).attach();
        let current = Context::current();
        assert!(current.span().span_context().is_sampled());
        recorder.record_rollout_duration_ms(120.0);
        recorder.record_verify_ms(8.0, true);
    }
    guard.shutdown().unwrap();

    let text = buf.text();
    let doc: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    for name in ["gym.rollout.duration_ms", "gym.verify.duration_ms"] {
        let point = point(&doc, name, "histogram");
        assert_eq!(u64_of(&point["count"]), 1, "{point}");
        let exemplars = point
            .get("exemplars")
            .and_then(serde_json::Value::as_array)
            .map_or(0, Vec::len);
        assert_eq!(
            exemplars, 0,
            "opentelemetry_sdk now exports exemplars ({name}: {point}): say so in the \
             otel README and rustdoc (they cite opentelemetry-rust#3369), and check \
             here that trace id {trace_id} arrives"
        );
    }
    assert!(!text.contains(&trace_id.to_string()), "{text}");
}
