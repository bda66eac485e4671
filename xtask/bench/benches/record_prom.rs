//! Record path, Prometheus backend: our facade calls with the prom recorder
//! installed, beside every peer's histogram record and an empty loop, single-
//! threaded and with 2 threads recording into the same instrument at once.

use std::hint::black_box;
use std::time::Duration;

use gym_bench::{harness, measure, peers, Candidate, Mode, Output};
use gym_metrics_api::{record_rollout_duration, record_verify, Recorder};
use serde_json::Value;

fn main() {
    let mode = Mode::current();
    let (handle, _installation) = gym_metrics_prom::PrometheusBuilder::new()
        .install_recorder()
        .unwrap();
    // A second, uninstalled recorder: the backend without the facade.
    let (direct, _direct_handle) = gym_metrics_prom::PrometheusBuilder::new().build().unwrap();
    let prometheus = peers::prometheus_histogram();
    let prometheus_client = peers::prometheus_client_histogram();
    let (_metrics_recorder, metrics_handle) = peers::metrics_histogram();
    let (_otel_provider, otel) = peers::otel_sdk_histogram();

    let candidates = [
        Candidate::new("empty loop", |v| {
            black_box(v);
        }),
        Candidate::new("gym-metrics-prom record_rollout_duration", |v| {
            record_rollout_duration(Duration::from_millis(v))
        }),
        Candidate::new("gym-metrics-prom record_verify", |v| {
            record_verify(Duration::from_millis(v), v < 2500)
        }),
        Candidate::new(
            "gym-metrics-prom PrometheusRecorder direct, rollout (f64 ms)",
            |v| direct.record_rollout_duration(v as f64),
        ),
        Candidate::new("prometheus 0.14 Histogram::observe", |v| {
            prometheus.observe(v as f64)
        }),
        Candidate::new("prometheus-client 0.26 Histogram::observe", |v| {
            prometheus_client.observe(v as f64)
        }),
        Candidate::new("opentelemetry_sdk 0.33 Histogram::record", |v| {
            otel.record(v as f64, &[])
        }),
        Candidate::new(
            "metrics 0.24 (exporter-prometheus) Histogram::record",
            |v| metrics_handle.record(v as f64),
        ),
    ];

    let mut out = Output::new("record_prom");
    for threads in [1, 2] {
        let figures = measure(threads, mode.rounds(), mode.per_run(), &candidates);
        harness::print(&format!("record path, {threads} thread(s)"), &figures);
        out.set(
            &format!("threads_{threads}"),
            Value::Array(figures.iter().map(|f| f.to_json()).collect()),
        );
    }

    // Nothing lost: the exposition counts every rollout record made.
    let text = handle.render();
    assert!(
        text.contains("gym_rollout_duration_ms_milliseconds_count{"),
        "{text}"
    );
    assert_eq!(
        prometheus.get_sample_count(),
        rollout_records(&text),
        "ours and prometheus saw the same number of records"
    );
    out.write().unwrap();
}

/// The `_count` of the rollout histogram in `text`.
fn rollout_records(text: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with("gym_rollout_duration_ms_milliseconds_count{"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap()
}
