//! What the otel backend exports for a timed record made inside a span: the
//! span's trace and span ids as an exemplar on the bucket the value fell
//! in, with its value and time, as the metrics SDK specification's aligned
//! bucket reservoir keeps them (the newest per bucket), under each
//! `OTEL_METRICS_EXEMPLAR_FILTER`. A plain record (no timer) carries none.

use crate::support::otlp_json::*;
use crate::support::*;

use std::time::Duration;

use gym_metrics_api::backend::Recorder;
use gym_metrics_otel::{ExemplarFilter, MetricsExporter, OtelBuilder};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN: &str = "00f067aa0ba902b7";

/// The console document of one export after timed records inside a span
/// (`flags`), and a plain record beside them.
fn exported(filter: ExemplarFilter, flags: TraceFlags) -> serde_json::Value {
    let buf = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .exemplar_filter(filter)
        .build()
        .unwrap();
    let span = SpanContext::new(
        TraceId::from_hex(TRACE).unwrap(),
        SpanId::from_hex(SPAN).unwrap(),
        flags,
        true,
        TraceState::default(),
    );
    {
        let _attached = Context::current().with_remote_span_context(span).attach();
        // What a timer does: the exemplar of its context, then the record.
        let exemplar = recorder.exemplar();
        recorder.record_rollout_duration_with(Duration::from_millis(120), exemplar.as_ref());
        recorder.record_verify_with(Duration::from_millis(8), true, exemplar.as_ref());
        recorder.record_rollout_duration_ms(3_000.0); // plain: no exemplar
    }
    guard.shutdown().unwrap();
    serde_json::from_str(buf.text().trim()).unwrap()
}

fn exemplars(doc: &serde_json::Value, name: &str) -> Vec<serde_json::Value> {
    let point = point(doc, name, "histogram");
    (point.get("exemplars").and_then(serde_json::Value::as_array))
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_timed_record_inside_a_sampled_span_exports_its_ids_as_an_exemplar() {
    let doc = exported(ExemplarFilter::TraceBased, TraceFlags::SAMPLED);
    for (name, value) in [
        ("gym.rollout.duration_ms", 120.0),
        ("gym.verify.duration_ms", 8.0),
    ] {
        let exemplars = exemplars(&doc, name);
        assert_eq!(exemplars.len(), 1, "{name}: {exemplars:?}");
        let e = &exemplars[0];
        // OTLP/JSON: ids in hex, not base64; the value and a time.
        assert_eq!(e["traceId"], TRACE, "{e}");
        assert_eq!(e["spanId"], SPAN, "{e}");
        assert_eq!(e["asDouble"].as_f64(), Some(value), "{e}");
        assert!(
            u64_of(&e["timeUnixNano"]) > 1_600_000_000_000_000_000,
            "{e}"
        );
    }
}

#[test]
fn the_filter_decides_which_spans_leave_an_exemplar() {
    let unsampled = TraceFlags::default();
    let trace_based = exported(ExemplarFilter::TraceBased, unsampled);
    assert!(exemplars(&trace_based, "gym.rollout.duration_ms").is_empty());
    let always_on = exported(ExemplarFilter::AlwaysOn, unsampled);
    assert_eq!(exemplars(&always_on, "gym.rollout.duration_ms").len(), 1);
    let always_off = exported(ExemplarFilter::AlwaysOff, TraceFlags::SAMPLED);
    assert!(exemplars(&always_off, "gym.rollout.duration_ms").is_empty());
    assert!(!always_off.to_string().contains(TRACE));
}
