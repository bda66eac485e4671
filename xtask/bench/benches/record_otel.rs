//! Record path, OpenTelemetry backend: our facade calls with the otel
//! recorder installed, beside the bare SDK's histogram record with the same
//! boundaries and reader kind, and an empty loop; 1 and 2 threads.

use std::hint::black_box;
use std::time::Duration;

use gym_bench::{harness, peers, Mode, Output};
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{record_rollout_duration, record_verify};
use gym_metrics_otel::{MetricsExporter, OtelBuilder};

/// The control row: the same SDK call on a second, identical instrument.
const CONTROL: &str = "control: a second opentelemetry_sdk 0.33 Histogram, built the same way";

fn main() {
    let mode = Mode::current();
    let mut c = harness::criterion();
    // A real reader (console into a sink, an hour apart), as the bare SDK
    // below has: with exporter `none` the SDK would have no reader at all.
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .export_interval(Duration::from_secs(3600))
        .build()
        .expect("building the otel recorder");
    let _installation = gym_metrics_api::install(recorder).expect("installing the otel recorder");
    // A second, uninstalled recorder: the backend without the facade.
    let (direct, direct_guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .export_interval(Duration::from_secs(3600))
        .build()
        .expect("building the direct otel recorder");
    // The `metrics` crate bridged into the same pipeline: handles
    // registered once, then recorded (the bridge used locally, not installed).
    let (bridge_recorder, bridge_guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .export_interval(Duration::from_secs(3600))
        .with_metrics_bridge(gym_metrics_otel::MetricsBridgeOptions::new())
        .build()
        .expect("building the bridged otel recorder");
    let bridge = bridge_guard
        .metrics_recorder()
        .expect("the bridge asked for");
    drop(bridge_recorder);
    let metadata = metrics::Metadata::new(module_path!(), metrics::Level::INFO, None);
    let key = metrics::Key::from_static_name("rollout_duration_ms");
    // A counter of its own name: under the histogram's, its family would
    // meet the histogram's and the bridge would hand out a no-op handle.
    let counter_key = metrics::Key::from_static_name("jobs.done");
    let bridge_histogram = metrics::Recorder::register_histogram(&bridge, &key, &metadata);
    let bridge_counter = metrics::Recorder::register_counter(&bridge, &counter_key, &metadata);
    let (_otel_provider, otel) = peers::otel_sdk_histogram();
    // A control: a second bare SDK instrument, built the same way. How far
    // it lands from the first is how far apart two identical SDK
    // instruments measure in one process.
    let (_control_provider, control) = peers::otel_sdk_histogram();

    let mut out = Output::new("record_otel");
    for threads in [1, 2] {
        let table = format!("record_otel threads_{threads}");
        let rows = harness::table_in_passes(&mut c, mode, &table, threads, |t| {
            t.run("empty loop", |v| {
                black_box(v);
            });
            t.run("gym-metrics-otel record_rollout_duration", |v| {
                record_rollout_duration(Duration::from_millis(v))
            });
            t.run("gym-metrics-otel record_verify", |v| {
                record_verify(Duration::from_millis(v), v < 2500)
            });
            t.run(
                "gym-metrics-otel OtelRecorder direct, rollout (f64 ms)",
                |v| direct.record_rollout_duration_ms(v as f64),
            );
            t.run("opentelemetry_sdk 0.33 Histogram::record", |v| {
                otel.record(v as f64, &[])
            });
            t.run(CONTROL, |v| control.record(v as f64, &[]));
            t.run("gym-metrics-otel metrics bridge Histogram::record", |v| {
                bridge_histogram.record(v as f64)
            });
            t.run("gym-metrics-otel metrics bridge Counter::increment", |v| {
                bridge_counter.increment(v)
            });
        });
        out.set(&format!("threads_{threads}"), rows);
    }
    c.final_summary();
    guard.shutdown().expect("shutting the otel recorder down");
    direct_guard
        .shutdown()
        .expect("shutting the direct otel recorder down");
    // The bridge's rows timed real handles, not refused (no-op) ones.
    assert_eq!(bridge.stats().refused, 0, "a bridged handle was refused");
    bridge_guard
        .shutdown()
        .expect("shutting the bridged otel recorder down");
    out.write().expect("writing the record_otel figures");
}
