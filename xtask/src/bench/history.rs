//! The history file (`xtask/bench/history.jsonl`, kept in the repository):
//! one JSON line per full `cargo xtask bench` run with its machine and its
//! headline ratios, so that the figures of several machines stand side by
//! side instead of the last run overwriting the others'.

use std::io::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::ipc::implausible;
use super::results::{Results, ROLLOUT};

/// Where full runs append, relative to the workspace root.
pub const HISTORY_PATH: &str = "xtask/bench/history.jsonl";

/// The figures each run appends: instructions per record, the 1-thread
/// time and the ratios to the fastest peer (`None` where not measured, or
/// where the time is flagged as implausible).
pub fn headline(r: &Results) -> Vec<(&'static str, Option<f64>)> {
    let [one, two] = ["threads_1", "threads_2"].map(|threads| {
        let (_, _, q, implied) = r.against_peer(threads);
        q.filter(|_| !implausible(implied))
    });
    let ns = r.record_prom.median("threads_1", ROLLOUT);
    vec![
        ("instructions_rollout", r.prom_per_call("rollout")),
        ("instructions_verify", r.prom_per_call("verify")),
        ("rollout_1_thread_ns", ns),
        ("ratio_1_thread_to_fastest_peer", one),
        ("ratio_2_threads_to_fastest_peer", two),
    ]
}

/// One run's line: when, the CPU, and the [`headline`] figures (each `null`
/// when this run did not measure it).
pub fn entry(finished: &str, cpu: &super::machine::Cpu, headline: &[(&str, Option<f64>)]) -> Value {
    let mut figures = serde_json::Map::new();
    for (name, value) in headline {
        // Two decimals: enough for a ratio, and a stable line to diff.
        let rounded = value.map(|v| (v * 100.0).round() / 100.0);
        figures.insert((*name).to_string(), json!(rounded));
    }
    json!({
        "finished": finished,
        "cpu": cpu.model_name,
        "family": cpu.family,
        "model": cpu.model,
        "mhz": cpu.mhz.map(f64::round),
        "measured_mhz": cpu.measured_mhz.map(f64::round),
        "figures": figures,
    })
}

/// Appends `entry` to the file at `path` as one line, creating the file.
///
/// # Errors
/// The file cannot be opened or written.
pub fn append(path: &Path, entry: &Value) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
    writeln!(file, "{entry}").map_err(|e| format!("appending to {}: {e}", path.display()))
}

/// Every line of the file at `path` that parses (none if there is no file).
pub fn read(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::machine::Cpu;

    #[test]
    fn each_run_appends_one_line_and_earlier_lines_stay() {
        let dir = std::env::temp_dir().join(format!("gym-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.jsonl");
        let _ = std::fs::remove_file(&path);
        let cpu = Cpu::parse(
            "cpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2449.998\n",
        );
        let first = entry(
            "2026-12-01 10:00 UTC",
            &cpu,
            &[("ratio_1_thread", Some(0.8049))],
        );
        let second = entry("2026-12-02 10:00 UTC", &cpu, &[("ratio_1_thread", None)]);
        append(&path, &first).unwrap();
        append(&path, &second).unwrap();
        let lines = read(&path);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["cpu"], "AMD EPYC 7B13");
        assert_eq!(
            (lines[0]["family"].as_u64(), lines[0]["model"].as_u64()),
            (Some(25), Some(1))
        );
        assert_eq!(lines[0]["mhz"].as_f64(), Some(2450.0));
        assert_eq!(lines[0]["figures"]["ratio_1_thread"].as_f64(), Some(0.8));
        assert!(lines[1]["figures"]["ratio_1_thread"].is_null());
        assert_eq!(lines[1]["finished"], "2026-12-02 10:00 UTC");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
