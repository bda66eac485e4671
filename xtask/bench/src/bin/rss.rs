//! Resident memory after 10,000 records and after 10,000,000, for one
//! backend's recorder: `rss <prom|otel> [records]`. Prints one JSON line.

use std::process::ExitCode;
use std::time::Duration;

use gym_metrics_api::backend::Recorder;

/// `VmRSS` of this process, in KiB (0 if unreadable).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn run(recorder: &dyn Recorder, total: u64) -> (u64, u64) {
    let record = |from: u64, to: u64| {
        for i in from..to {
            recorder.record_rollout_duration_ms((i * 7919 % 4_000_000) as f64);
            recorder.record_verify_ms((i % 60_000) as f64, i % 4 != 0);
        }
    };
    record(0, 10_000);
    let after_small = rss_kib();
    record(10_000, total);
    (after_small, rss_kib())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let total: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let result = match args.first().map(String::as_str) {
        Some("prom") => gym_metrics_prom::PrometheusBuilder::new()
            .build()
            .map(|(recorder, _handle)| run(&recorder, total))
            .map_err(|e| e.to_string()),
        Some("otel") => gym_metrics_otel::OtelBuilder::new()
            .exporter(gym_metrics_otel::MetricsExporter::Console)
            .console_writer(std::io::sink())
            .export_interval(Duration::from_secs(3600))
            .build()
            .map(|(recorder, _guard)| run(&recorder, total))
            .map_err(|e| e.to_string()),
        _ => Err("usage: rss <prom|otel> [records]".to_string()),
    };
    match result {
        Ok((small, large)) => {
            println!(
                "{{\"records_small\": 10000, \"rss_kib_small\": {small}, \"records_large\": {total}, \"rss_kib_large\": {large}}}"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rss: {e}");
            ExitCode::FAILURE
        }
    }
}
