//! Instruction counts under callgrind: only the loop function's own
//! instructions (`--toggle-collect`), repeatable on a noisy machine.

use std::path::Path;
use std::process::Command;

/// Calls per counted loop.
pub const CALLS: u64 = 1_000_000;

/// Instructions executed inside the `gym_bench_<mode>_loop` that `program`
/// runs, with `backend` (`Some("prom")`) installed before the loop.
///
/// # Errors
/// valgrind could not run, failed, or wrote no total.
pub fn count(
    program: &Path,
    mode: &str,
    backend: Option<&str>,
    out_dir: &Path,
) -> Result<u64, String> {
    // Any loop function: identical loops may be folded into one symbol (the
    // noop build folds the record loops into the empty one), and only the
    // loop named by `mode` runs.
    let function = "gym_bench_*_loop";
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let out_file = out_dir.join(format!(
        "callgrind.{name}.{}{mode}.out",
        backend.map_or_else(String::new, |b| format!("{b}."))
    ));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(format!("--toggle-collect={function}"))
        .arg(program)
        .args([mode, &CALLS.to_string()])
        .args(backend)
        .output()
        .map_err(|e| format!("running valgrind (is it installed?): {e}"))?;
    if !status.status.success() {
        return Err(format!(
            "valgrind on {} {mode} failed: {}",
            program.display(),
            String::from_utf8_lossy(&status.stderr)
        ));
    }
    let text = std::fs::read_to_string(&out_file)
        .map_err(|e| format!("reading {}: {e}", out_file.display()))?;
    let total: u64 = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no instruction total in {}", out_file.display()))?;
    // A loop of CALLS iterations runs at least one instruction per call; less
    // means the toggle never matched (a stripped binary counts zero), and a
    // zero must not pass for "the noop loop equals the empty one".
    if total < CALLS {
        return Err(format!(
            "{total} instructions counted in {} {mode}: the loop symbol `{function}` was not found (a stripped binary?)",
            program.display()
        ));
    }
    Ok(total)
}
