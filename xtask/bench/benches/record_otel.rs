//! Record path, OpenTelemetry backend: our facade calls with the otel
//! recorder installed, beside the bare SDK's histogram record with the same
//! boundaries and reader kind, and an empty loop; 1 and 2 threads.

use std::hint::black_box;
use std::time::Duration;

use gym_bench::{harness, measure, peers, Candidate, Mode, Output};
use gym_metrics_api::{record_rollout_duration, record_verify, Recorder};
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use serde_json::Value;

fn main() {
    let mode = Mode::current();
    // A real reader (console into a sink, an hour apart), as the bare SDK
    // below has: with exporter `none` the SDK would have no reader at all.
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .export_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    let _installation = gym_metrics_api::install(recorder).unwrap();
    // A second, uninstalled recorder: the backend without the facade.
    let (direct, direct_guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .export_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    let (_otel_provider, otel) = peers::otel_sdk_histogram();

    let candidates = [
        Candidate::new("empty loop", |v| {
            black_box(v);
        }),
        Candidate::new("gym-metrics-otel record_rollout_duration", |v| {
            record_rollout_duration(Duration::from_millis(v))
        }),
        Candidate::new("gym-metrics-otel record_verify", |v| {
            record_verify(Duration::from_millis(v), v < 2500)
        }),
        Candidate::new(
            "gym-metrics-otel OtelRecorder direct, rollout (f64 ms)",
            |v| direct.record_rollout_duration(v as f64),
        ),
        Candidate::new("opentelemetry_sdk 0.33 Histogram::record", |v| {
            otel.record(v as f64, &[])
        }),
    ];

    let mut out = Output::new("record_otel");
    for threads in [1, 2] {
        let figures = measure(threads, mode.rounds(), mode.per_run(), &candidates);
        harness::print(
            &format!("record path (otel), {threads} thread(s)"),
            &figures,
        );
        out.set(
            &format!("threads_{threads}"),
            Value::Array(figures.iter().map(|f| f.to_json()).collect()),
        );
    }
    guard.shutdown().unwrap();
    direct_guard.shutdown().unwrap();
    out.write().unwrap();
}
