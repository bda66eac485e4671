//! OpenTelemetry export: CPU time per export cycle and bytes per export over
//! OTLP http/protobuf to a loopback sink, our backend against the bare SDK
//! with the same instruments (two histograms with the same boundaries, the
//! success-rate gauge and two counters observed at collection).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gym_bench::cpu_time::process_cpu_time;
use gym_bench::otlp_sink::OtlpSink;
use gym_bench::{peers, Mode, Output};
use gym_metrics_api::catalogue::{
    ROLLOUT_DURATION, VERIFY_COMPLETED, VERIFY_DURATION, VERIFY_SUCCEEDED, VERIFY_SUCCESS_RATE,
};
use gym_metrics_api::Recorder;
use gym_metrics_otel::{MetricsExporter, OtelBuilder, OtlpProtocol};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use serde_json::json;

const INTERVAL: Duration = Duration::from_millis(50);

/// (exports, CPU per export in µs, bytes per export) over `window`, after
/// the first export arrived.
fn observe(sink: &OtlpSink, window: Duration) -> (u64, f64, f64) {
    let (first, _) = sink.snapshot();
    while sink.snapshot().0 == first {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (r0, b0) = sink.snapshot();
    let cpu0 = process_cpu_time();
    let started = Instant::now();
    while started.elapsed() < window {
        std::thread::sleep(Duration::from_millis(5));
    }
    let (r1, b1) = sink.snapshot();
    let cpu = process_cpu_time() - cpu0;
    let exports = (r1 - r0).max(1);
    (
        r1 - r0,
        cpu.as_secs_f64() * 1e6 / exports as f64,
        (b1 - b0) as f64 / exports as f64,
    )
}

fn ours(sink: &OtlpSink, window: Duration) -> (u64, f64, f64) {
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Otlp)
        .protocol(OtlpProtocol::HttpProtobuf)
        .endpoint(sink.url())
        .export_interval(INTERVAL)
        .build()
        .unwrap();
    for i in 0..10_000u64 {
        recorder.record_rollout_duration((i * 7919 % 4_000_000) as f64);
        recorder.record_verify((i * 104_729 % 60_000) as f64, i % 4 != 0);
    }
    let figures = observe(sink, window);
    guard.shutdown().unwrap();
    figures
}

fn bare_sdk(sink: &OtlpSink, window: Duration) -> (u64, f64, f64) {
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(sink.url())
        .build()
        .unwrap();
    let reader = PeriodicReader::builder(exporter)
        .with_interval(INTERVAL)
        .build();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    let meter = provider.meter("gym-metrics");
    let histogram = |i: gym_metrics_api::Instrument| {
        meter
            .f64_histogram(i.name)
            .with_unit(i.unit.unwrap_or_default())
            .with_description(i.description)
            .with_boundaries(peers::bounds())
            .build()
    };
    let rollout = histogram(ROLLOUT_DURATION);
    let verify = histogram(VERIFY_DURATION);
    let completed = Arc::new(AtomicU64::new(0));
    let succeeded = Arc::new(AtomicU64::new(0));
    let (c, s) = (Arc::clone(&completed), Arc::clone(&succeeded));
    let _rate = meter
        .f64_observable_gauge(VERIFY_SUCCESS_RATE.name)
        .with_description(VERIFY_SUCCESS_RATE.description)
        .with_callback(move |o| {
            let done = c.load(Ordering::Relaxed);
            if done > 0 {
                o.observe(s.load(Ordering::Relaxed) as f64 / done as f64, &[]);
            }
        })
        .build();
    let c = Arc::clone(&completed);
    let _completed = meter
        .u64_observable_counter(VERIFY_COMPLETED.name)
        .with_description(VERIFY_COMPLETED.description)
        .with_callback(move |o| o.observe(c.load(Ordering::Relaxed), &[]))
        .build();
    let s = Arc::clone(&succeeded);
    let _succeeded = meter
        .u64_observable_counter(VERIFY_SUCCEEDED.name)
        .with_description(VERIFY_SUCCEEDED.description)
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
    let figures = observe(sink, window);
    provider.shutdown().unwrap();
    figures
}

fn main() {
    let mode = Mode::current();
    let (window, rounds) = match mode {
        Mode::Timing => (Duration::from_secs(3), 3),
        Mode::Quick => (Duration::from_millis(200), 1),
    };
    let sink = OtlpSink::start().unwrap();
    let mut totals = [(0u64, 0.0f64, 0.0f64); 2];
    for _ in 0..rounds {
        for (k, run) in [ours as fn(&OtlpSink, Duration) -> (u64, f64, f64), bare_sdk]
            .iter()
            .enumerate()
        {
            let (n, cpu, bytes) = run(&sink, window);
            totals[k].0 += n;
            totals[k].1 += cpu * n as f64;
            totals[k].2 += bytes * n as f64;
        }
    }
    let row = |(n, cpu, bytes): (u64, f64, f64)| {
        let n1 = n.max(1) as f64;
        json!({ "exports": n, "cpu_us_per_export": cpu / n1, "bytes_per_export": bytes / n1 })
    };
    let result = json!({ "gym-metrics-otel": row(totals[0]), "opentelemetry_sdk": row(totals[1]) });
    println!("otel export per cycle: {result}");
    let mut out = Output::new("otel_export");
    out.set("export", result);
    out.write().unwrap();
}
