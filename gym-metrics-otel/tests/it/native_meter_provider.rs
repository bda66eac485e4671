//! The guard's meter provider: an instrument the application creates on it
//! with the OpenTelemetry API is exported beside ours, with our resource, in
//! the same export, flushed by the guard's shutdown; as the global provider
//! too. (Global state: its own test binary.)

use crate::support::otlp_json::*;
use crate::support::*;
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_otel::{MetricsExporter, OtelBuilder, SCOPE_NAME as METER_SCOPE};
use opentelemetry::metrics::MeterProvider;
use opentelemetry::KeyValue;
use serde_json::Value;

fn scopes(doc: &Value) -> Vec<String> {
    doc["resourceMetrics"][0]["scopeMetrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scope"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_applications_instruments_share_our_resource_export_and_shutdown() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let buf = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::server("math-0", "resources"))
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .build()
        .unwrap();
    recorder.record_verify_ms(40.0, true);
    let meter = guard.meter_provider().unwrap().meter("my-app");
    meter
        .u64_counter("sandbox.starts")
        .build()
        .add(3, &[KeyValue::new("provider", "docker")]);
    assert!(guard.set_global_meter_provider());
    opentelemetry::global::meter("my-lib")
        .f64_gauge("pool.size")
        .build()
        .record(7.0, &[]);
    guard.shutdown().unwrap();

    let text = buf.text();
    let docs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 1, "one export, at shutdown: {text}");
    let doc = &docs[0];
    let mut names = scopes(doc);
    names.sort();
    assert_eq!(names, [METER_SCOPE, "my-app", "my-lib"]);
    assert_eq!(
        resource_attribute(doc, "service.name").as_deref(),
        Some("nemo-gym/math-0"),
        "our service.name (base nemo-gym, as NeMo Gym names it)"
    );
    let starts = point(doc, "sandbox.starts", "sum");
    assert_eq!(u64_of(&starts["asInt"]), 3);
    assert_eq!(point(doc, "pool.size", "gauge")["asDouble"], 7.0);
    assert!(metric(doc, "gym.verify.duration_ms").is_some());
}

#[test]
fn exporter_none_through_install_has_no_provider_to_hand_out() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let guard = OtelBuilder::new()
        .exporter(MetricsExporter::None)
        .install()
        .unwrap();
    assert!(guard.meter_provider().is_none());
    assert!(!guard.set_global_meter_provider());
}
