//! OTLP http/json on the wire: the reference sequence arrives exactly, read
//! from the JSON as the OTLP specification writes it (camelCase names, 64-bit
//! integers as strings) without opentelemetry-proto's decoder.
//!
//! rotel (0.0.1-alpha10), the one packaged receiver here that takes OTLP/JSON,
//! reads the specification's string-encoded integers (`"asInt": "4"`) as 0,
//! and VictoriaMetrics answers 400 to JSON, so the exact values are checked
//! at this receiver; see RELIABILITY.md.
#![cfg(feature = "http-json")]

use crate::support::fake_collector::{Answer, FakeCollector};
use crate::support::otlp_json::{metric, point, resource_attribute, u64_of};
use crate::support::*;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

#[test]
fn reference_sequence_arrives_exactly_over_http_json() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeCollector::start(Answer::Ok);
    let base = collector
        .endpoint()
        .trim_end_matches("/v1/metrics")
        .to_string();
    let env = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL" => Some("http/json".to_string()),
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(base.clone()),
        "OTEL_SERVICE_NAME" => Some("json".to_string()),
        _ => None,
    };
    let (recorder, guard) = OtelBuilder::from_env_lookup(env)
        .unwrap()
        .role(Role::orchestrator())
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    guard.shutdown().unwrap();

    let headers = collector.last_headers();
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "application/json"),
        "{headers:?}"
    );
    let docs = collector.accepted_json();
    assert!(collector.accepted().is_empty(), "no protobuf body was sent");
    let doc = docs.last().expect("the final export arrived as JSON");
    assert_eq!(
        resource_attribute(doc, "service.name").as_deref(),
        Some("json/orchestrator")
    );
    for (instrument, values) in [
        (Instrument::ROLLOUT_DURATION, rollout_values()),
        (Instrument::VERIFY_DURATION, verify_values()),
    ] {
        let p = point(doc, instrument.name, "histogram");
        assert!(p["count"].is_string(), "int64 as a JSON string: {p}");
        assert_eq!(u64_of(&p["count"]), values.len() as u64);
        assert_eq!(p["sum"].as_f64().unwrap(), values.iter().sum::<f64>());
        let buckets: Vec<u64> = p["bucketCounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(u64_of)
            .collect();
        assert_eq!(
            buckets,
            expected_bucket_counts(&values),
            "{}",
            instrument.name
        );
    }
    let rate = point(doc, Instrument::VERIFY_SUCCESS_RATE.name, "gauge");
    assert_eq!(rate["asDouble"].as_f64(), Some(0.75));
    let completed = point(doc, Instrument::VERIFY_COMPLETED.name, "sum");
    assert_eq!(u64_of(&completed["asInt"]), 4);
    let succeeded = point(doc, Instrument::VERIFY_SUCCEEDED.name, "sum");
    assert_eq!(u64_of(&succeeded["asInt"]), 3);
    assert_eq!(
        metric(doc, Instrument::VERIFY_COMPLETED.name).unwrap()["sum"]["isMonotonic"],
        true
    );
    let active = point(doc, Instrument::SERVERS_ACTIVE.name, "gauge");
    assert_eq!(u64_of(&active["asInt"]), FLEET_SIZE);
}
