//! OpenTelemetry export: CPU time per export cycle and bytes per export over
//! OTLP http/protobuf to a loopback sink, our backend against the bare SDK
//! with the same instruments (two histograms with the same boundaries, the
//! success-rate gauge and two counters observed at collection).
//!
//! One criterion iteration is one export cycle: `iter_custom` waits for the
//! next export to arrive at the sink, then for `iters` more, and returns the
//! whole process's CPU time over them (not the wall time, which is the
//! export interval). The bytes per export are counted by the sink over the
//! whole benchmark.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode};
use gym_bench::cpu_time::process_cpu_time;
use gym_bench::otlp_sink::OtlpSink;
use gym_bench::{harness, peers, Figure, Mode, Output, Table};
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::backend::Recorder;
use gym_metrics_otel::{MetricsExporter, OtelBuilder, OtlpProtocol};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use serde_json::{json, Value};

const INTERVAL: Duration = Duration::from_millis(50);
const GROUP: &str = "otel_export cpu per export";

/// Benchmarks the pipeline exporting into `sink` (already running) as
/// `name`; its row, with the exports and the bytes per export the sink
/// counted during the benchmark.
fn bench(t: &mut Table<'_>, name: &'static str, sink: &OtlpSink) -> (u64, f64) {
    let (r0, b0) = sink.snapshot();
    t.run_with(name, |b| {
        b.iter_custom(|iters| {
            // Start on an export's arrival, so the span covers whole cycles.
            let start = sink.wait_beyond(sink.snapshot().0);
            let cpu0 = process_cpu_time();
            let mut seen = start;
            while seen < start + iters {
                seen = sink.wait_beyond(seen);
            }
            process_cpu_time() - cpu0
        })
    });
    let (r1, b1) = sink.snapshot();
    let exports = r1 - r0;
    (exports, (b1 - b0) as f64 / exports.max(1) as f64)
}

fn ours(t: &mut Table<'_>, sink: &OtlpSink) -> (u64, f64) {
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Otlp)
        .protocol(OtlpProtocol::HttpProtobuf)
        .endpoint(sink.url())
        .export_interval(INTERVAL)
        .build()
        .expect("building the otel pipeline");
    for i in 0..10_000u64 {
        recorder.record_rollout_duration_ms((i * 7919 % 4_000_000) as f64);
        recorder.record_verify_ms((i * 104_729 % 60_000) as f64, i % 4 != 0);
    }
    let figures = bench(t, "gym-metrics-otel", sink);
    guard.shutdown().expect("shutting the otel pipeline down");
    figures
}

fn bare_sdk(t: &mut Table<'_>, sink: &OtlpSink) -> (u64, f64) {
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(sink.url())
        .build()
        .expect("building the OTLP exporter");
    let reader = PeriodicReader::builder(exporter)
        .with_interval(INTERVAL)
        .build();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    let meter = provider.meter("gym-metrics");
    let histogram = |i: gym_metrics_api::backend::Instrument| {
        meter
            .f64_histogram(i.name)
            .with_unit(i.unit.unwrap_or_default())
            .with_description(i.description)
            .with_boundaries(peers::bounds())
            .build()
    };
    let rollout = histogram(Instrument::ROLLOUT_DURATION);
    let verify = histogram(Instrument::VERIFY_DURATION);
    let completed = Arc::new(AtomicU64::new(0));
    let succeeded = Arc::new(AtomicU64::new(0));
    let (c, s) = (Arc::clone(&completed), Arc::clone(&succeeded));
    let _rate = meter
        .f64_observable_gauge(Instrument::VERIFY_SUCCESS_RATE.name)
        .with_description(Instrument::VERIFY_SUCCESS_RATE.description)
        .with_callback(move |o| {
            let done = c.load(Ordering::Relaxed);
            if done > 0 {
                o.observe(s.load(Ordering::Relaxed) as f64 / done as f64, &[]);
            }
        })
        .build();
    let c = Arc::clone(&completed);
    let _completed = meter
        .u64_observable_counter(Instrument::VERIFY_COMPLETED.name)
        .with_description(Instrument::VERIFY_COMPLETED.description)
        .with_callback(move |o| o.observe(c.load(Ordering::Relaxed), &[]))
        .build();
    let s = Arc::clone(&succeeded);
    let _succeeded = meter
        .u64_observable_counter(Instrument::VERIFY_SUCCEEDED.name)
        .with_description(Instrument::VERIFY_SUCCEEDED.description)
        .with_callback(move |o| o.observe(s.load(Ordering::Relaxed), &[]))
        .build();
    for i in 0..10_000u64 {
        rollout.record((i * 7919 % 4_000_000) as f64, &[]);
        verify.record((i * 104_729 % 60_000) as f64, &[]);
        completed.fetch_add(1, Ordering::Relaxed);
        if i % 4 != 0 {
            succeeded.fetch_add(1, Ordering::Relaxed);
        }
    }
    let figures = bench(t, "opentelemetry_sdk", sink);
    provider.shutdown().expect("shutting the SDK provider down");
    figures
}

fn main() {
    let mode = Mode::current();
    let mut c: Criterion = harness::criterion();
    let sink = OtlpSink::start().expect("starting the OTLP sink");
    let mut t = Table::new(&mut c, GROUP, 1);
    // An iteration is a 50 ms export cycle: few, equally long samples.
    t.group()
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let counted = [ours(&mut t, &sink), bare_sdk(&mut t, &sink)];
    t.finish(mode);
    c.final_summary();
    let mut result = serde_json::Map::new();
    for (name, (exports, bytes)) in ["gym-metrics-otel", "opentelemetry_sdk"]
        .into_iter()
        .zip(counted)
    {
        let mut row = json!({ "exports": exports, "bytes_per_export": bytes });
        if let (Some(e), Some(map)) = (
            Figure::read(mode, GROUP, name, 1).estimate,
            row.as_object_mut(),
        ) {
            map.insert("cpu_us_per_export".into(), json!(e.median_ns / 1e3));
            map.insert("cpu_low_us".into(), json!(e.low_ns / 1e3));
            map.insert("cpu_high_us".into(), json!(e.high_ns / 1e3));
        }
        result.insert(name.into(), row);
    }
    let result = Value::Object(result);
    println!("otel export per cycle: {result}");
    let mut out = Output::new("otel_export");
    out.set("export", result);
    out.write().expect("writing the otel_export figures");
}
