//! Record path, Prometheus backend: our facade calls with the prom recorder
//! installed, beside every peer's histogram record and an empty loop, single-
//! threaded and with 2 threads recording into the same instrument at once.

use std::hint::black_box;
use std::time::Duration;

use gym_bench::scrape_families::rollout_records;
use gym_bench::{harness, peers, Mode, Output};
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{record_rollout_duration, record_verify};
use gym_metrics_prom::MetricsBridgeOptions;
use metrics::Recorder as _;

const ROLLOUT: &str = "gym-metrics-prom record_rollout_duration";
const PROMETHEUS: &str = "prometheus 0.14 Histogram::observe";

fn main() {
    let mode = Mode::current();
    let mut c = harness::criterion();
    let (handle, _installation) = gym_metrics_prom::PrometheusBuilder::new()
        .install_recorder()
        .expect("installing the prom recorder");
    // A second, uninstalled recorder: the backend without the facade.
    let (direct, _direct_handle) = gym_metrics_prom::PrometheusBuilder::new()
        .build()
        .expect("building the direct prom recorder");
    let prometheus = peers::prometheus_histogram();
    let prometheus_client = peers::prometheus_client_histogram();
    let (metrics_recorder, metrics_handle) = peers::metrics_histogram();
    // The `metrics` crate bridged into our exposition: a histogram and a
    // counter handle, registered once, beside metrics-exporter-prometheus'.
    let (_bridged, bridge_handle) = gym_metrics_prom::PrometheusBuilder::new()
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .build()
        .expect("building the prom recorder with the metrics bridge");
    let bridge = bridge_handle
        .metrics_recorder()
        .expect("the bridge was asked for");
    let metadata = metrics::Metadata::new(module_path!(), metrics::Level::INFO, None);
    let key = metrics::Key::from_static_name("rollout_duration_ms");
    // A counter of its own name: under the histogram's, its family would
    // meet the histogram's and the bridge would hand out a no-op handle.
    let counter_key = metrics::Key::from_static_name("jobs.done");
    let bridge_histogram = bridge.register_histogram(&key, &metadata);
    let bridge_counter = bridge.register_counter(&counter_key, &metadata);
    let peer_counter = metrics_recorder.register_counter(&counter_key, &metadata);
    let (_otel_provider, otel) = peers::otel_sdk_histogram();

    let mut out = Output::new("record_prom");
    // Records made per candidate, to check afterwards that nothing was lost.
    let (mut rollouts, mut observed) = (0u64, 0u64);
    for threads in [1, 2] {
        let table = format!("record_prom threads_{threads}");
        let rows = harness::table_in_passes(&mut c, mode, &table, threads, |t| {
            t.run("empty loop", |v| {
                black_box(v);
            });
            rollouts += t.run(ROLLOUT, |v| {
                record_rollout_duration(Duration::from_millis(v))
            });
            t.run("gym-metrics-prom record_verify", |v| {
                record_verify(Duration::from_millis(v), v < 2500)
            });
            t.run(
                "gym-metrics-prom PrometheusRecorder direct, rollout (f64 ms)",
                |v| direct.record_rollout_duration_ms(v as f64),
            );
            observed += t.run(PROMETHEUS, |v| prometheus.observe(v as f64));
            t.run("prometheus-client 0.26 Histogram::observe", |v| {
                prometheus_client.observe(v as f64)
            });
            t.run("opentelemetry_sdk 0.33 Histogram::record", |v| {
                otel.record(v as f64, &[])
            });
            t.run(
                "metrics 0.24 (exporter-prometheus) Histogram::record",
                |v| metrics_handle.record(v as f64),
            );
            t.run("gym-metrics-prom metrics bridge Histogram::record", |v| {
                bridge_histogram.record(v as f64)
            });
            t.run(
                "metrics 0.24 (exporter-prometheus) Counter::increment",
                |v| peer_counter.increment(v),
            );
            t.run("gym-metrics-prom metrics bridge Counter::increment", |v| {
                bridge_counter.increment(v)
            });
        });
        out.set(&format!("threads_{threads}"), rows);
    }
    c.final_summary();

    // Nothing lost: the exposition counts every rollout record made through
    // the facade, and prometheus every observation, on 1 and 2 threads.
    let text = handle.render();
    assert_eq!(
        rollout_records(&text),
        Some(rollouts),
        "our exposition counts every rollout record made"
    );
    assert_eq!(
        prometheus.get_sample_count(),
        observed,
        "prometheus counts every observation made"
    );
    // The bridge's rows timed real handles, not refused (no-op) ones.
    assert_eq!(bridge.stats().refused, 0, "a bridged handle was refused");
    let bridged = bridge_handle.render();
    assert!(
        bridged.contains("\njobs_done_total{") && bridged.contains("\nrollout_duration_ms_count{"),
        "the bridge's handles recorded: {bridged}"
    );
    out.write().expect("writing the record_prom figures");
}
