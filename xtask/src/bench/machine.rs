//! What a report must name besides its figures: the machine, the toolchain
//! and the exact versions of every library measured.

use std::path::Path;
use std::process::Command;

/// The crates whose versions the report names, as in `Cargo.lock`.
pub const MEASURED_CRATES: [&str; 8] = [
    "gym-metrics-prom",
    "gym-metrics-otel",
    "prometheus",
    "prometheus-client",
    "opentelemetry_sdk",
    "metrics",
    "metrics-exporter-prometheus",
    "hyper",
];

/// The machine, one line per fact.
pub fn describe() -> Vec<String> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<f64>().ok())
        })
        .map_or_else(
            || "unknown".into(),
            |kib| format!("{:.1} GiB", kib / 1024.0 / 1024.0),
        );
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    vec![
        format!("CPU: {cpu}, {cores} logical cores available, {memory} RAM"),
        format!("kernel: {}", output_of("uname", &["-sr"])),
        format!("toolchain: {}", output_of("rustc", &["-V"])),
        format!("load average when the run ended (1, 5, 15 min): {load} (a shared machine: other builds ran meanwhile)"),
    ]
}

fn output_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("({program} unavailable)"))
}

/// `(name, version)` of [`MEASURED_CRATES`] as locked in `lock_file`.
pub fn versions(lock_file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(lock_file).unwrap_or_default();
    let mut found = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if MEASURED_CRATES.contains(&n.as_str()) {
                found.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    found.sort_by_key(|(n, _)| MEASURED_CRATES.iter().position(|m| *m == n));
    found
}
