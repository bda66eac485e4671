//! The console exporter: every export is one line that parses as JSON and
//! carries the recorded values.

use crate::support;

use std::time::{Duration, Instant};

use gym_metrics_api::backend::{Instrument, Recorder};
use gym_metrics_api::Role;
use gym_metrics_otel::{
    HistogramAggregation, MetricsExporter, OtelBuilder, TemporalityPreference, SCOPE_NAME,
};
use serde_json::Value;
use support::otlp_json::*;
use support::*;

fn console(role: Role, buf: &SharedBuf) -> OtelBuilder {
    OtelBuilder::new()
        .role(role)
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
}

fn documents(buf: &SharedBuf) -> Vec<Value> {
    buf.text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn shutdown_prints_the_final_values_as_one_json_line() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::orchestrator(), &buf).build().unwrap();
    record_reference_sequence(&recorder);
    guard.shutdown().unwrap();

    let docs = documents(&buf);
    assert_eq!(docs.len(), 1, "interval is 10 s: only the shutdown export");
    let doc = &docs[0];
    let scope = &doc["resourceMetrics"][0]["scopeMetrics"][0]["scope"];
    assert_eq!(scope["name"], SCOPE_NAME);
    assert_eq!(scope["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        resource_attribute(doc, "service.name").as_deref(),
        Some("nemo-gym/orchestrator")
    );
    assert_eq!(
        resource_attribute(doc, "gym.role").as_deref(),
        Some("orchestrator")
    );
    assert!(resource_attribute(doc, "service.instance.id").is_some());
    assert_eq!(
        resource_attribute(doc, "telemetry.sdk.language").as_deref(),
        Some("rust")
    );

    for (instrument, values) in [
        (Instrument::ROLLOUT_DURATION, rollout_values()),
        (Instrument::VERIFY_DURATION, verify_values()),
    ] {
        assert_eq!(metric(doc, instrument.name).unwrap()["unit"], "ms");
        let p = point(doc, instrument.name, "histogram");
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
        let bounds: Vec<f64> = p["explicitBounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_f64().unwrap())
            .collect();
        assert_eq!(bounds, Instrument::DEFAULT_DURATION_BOUNDARIES_MS.to_vec());
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

#[test]
fn a_server_exports_no_fleet_size_and_names_itself() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::server("math-0", "resources"), &buf)
        .service_name("lab")
        .resource_attribute("team", "rl")
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    recorder.record_active_servers(9); // ignored for a server
    guard.shutdown().unwrap();
    let doc = &documents(&buf)[0];
    assert!(metric(doc, Instrument::SERVERS_ACTIVE.name).is_none());
    assert!(metric(doc, Instrument::ROLLOUT_DURATION.name).is_some());
    assert_eq!(
        resource_attribute(doc, "service.name").as_deref(),
        Some("lab/math-0")
    );
    assert_eq!(
        resource_attribute(doc, "nemo.gym.server.type").as_deref(),
        Some("resources")
    );
    assert_eq!(resource_attribute(doc, "team").as_deref(), Some("rl"));
}

#[test]
fn before_any_verification_the_rate_is_absent_and_counters_are_zero() {
    let buf = SharedBuf::default();
    let (_recorder, guard) = console(Role::orchestrator(), &buf).build().unwrap();
    guard.shutdown().unwrap();
    let doc = &documents(&buf)[0];
    assert!(metric(doc, Instrument::VERIFY_SUCCESS_RATE.name).is_none());
    assert_eq!(
        u64_of(&point(doc, Instrument::VERIFY_COMPLETED.name, "sum")["asInt"]),
        0
    );
}

#[test]
fn exports_every_interval_one_document_per_line() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::orchestrator(), &buf)
        .export_interval(Duration::from_millis(100))
        .build()
        .unwrap();
    recorder.record_verify_ms(10.0, true);
    let start = Instant::now();
    while documents(&buf).len() < 3 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    recorder.record_verify_ms(10.0, false);
    guard.shutdown().unwrap();
    let docs = documents(&buf);
    assert!(docs.len() >= 4, "{} exports", docs.len());
    let last = docs.last().unwrap();
    assert_eq!(
        point(last, Instrument::VERIFY_SUCCESS_RATE.name, "gauge")["asDouble"].as_f64(),
        Some(0.5)
    );
}

#[test]
fn custom_boundaries_are_the_explicit_buckets() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::orchestrator(), &buf)
        .histogram_boundaries(vec![50.0, 500.0])
        .unwrap()
        .build()
        .unwrap();
    for ms in [10.0, 50.0, 51.0, 5000.0] {
        recorder.record_rollout_duration_ms(ms);
    }
    guard.shutdown().unwrap();
    let doc = &documents(&buf)[0];
    let p = point(doc, Instrument::ROLLOUT_DURATION.name, "histogram");
    let buckets: Vec<u64> = p["bucketCounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(u64_of)
        .collect();
    assert_eq!(buckets, vec![2, 1, 1]);
}

#[test]
fn base2_exponential_histograms_when_asked() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::orchestrator(), &buf)
        .histogram_aggregation(HistogramAggregation::Base2Exponential)
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    guard.shutdown().unwrap();
    let doc = &documents(&buf)[0];
    for (name, values) in [
        (Instrument::ROLLOUT_DURATION.name, rollout_values()),
        (Instrument::VERIFY_DURATION.name, verify_values()),
    ] {
        let p = point(doc, name, "exponentialHistogram");
        assert_eq!(u64_of(&p["count"]), values.len() as u64);
        assert_eq!(p["sum"].as_f64().unwrap(), values.iter().sum::<f64>());
        assert!(metric(doc, name).unwrap().get("histogram").is_none());
    }
}

#[test]
fn delta_temporality_when_asked() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::orchestrator(), &buf)
        .temporality(TemporalityPreference::Delta)
        .export_interval(Duration::from_millis(100))
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    guard.force_flush().unwrap();
    recorder.record_rollout_duration_ms(7.0);
    guard.shutdown().unwrap();
    let docs = documents(&buf);
    let last = docs.last().unwrap();
    let m = metric(last, Instrument::ROLLOUT_DURATION.name).unwrap();
    assert_eq!(m["histogram"]["aggregationTemporality"], 1, "1 = delta");
    assert_eq!(
        u64_of(&m["histogram"]["dataPoints"][0]["count"]),
        1,
        "only the value since the flush"
    );
}

#[test]
fn dropping_the_guard_exports_the_final_values() {
    let buf = SharedBuf::default();
    let (recorder, guard) = console(Role::orchestrator(), &buf).build().unwrap();
    record_reference_sequence(&recorder);
    drop(guard);
    let docs = documents(&buf);
    assert_eq!(docs.len(), 1);
    let p = point(&docs[0], Instrument::VERIFY_DURATION.name, "histogram");
    assert_eq!(u64_of(&p["count"]), 4);
}
