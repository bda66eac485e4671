//! The project tried the way a newcomer tries it: `cargo run --bin simple` at
//! the workspace root, no `-p`, no features. A workspace-wide build once
//! compiled every record call away (a library had turned on the API's `off`
//! feature), and the program still said it had recorded; this check reads the
//! exposition it prints and wants the rollout in it.

use crate::step::cargo;

/// The series `simple` must print after recording one rollout of 1200 ms.
const ROLLOUT_COUNT: &str = "gym_rollout_duration_ms_milliseconds_count{";

/// Runs `cargo run --bin simple` at the workspace root and checks that its
/// exposition counts the one rollout it recorded.
pub fn simple_records() -> Result<(), String> {
    let out = cargo()
        .args(["run", "--quiet", "--bin", "simple"])
        .output()
        .map_err(|e| format!("could not run cargo run --bin simple: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "cargo run --bin simple failed ({}):\n{}{}",
            out.status,
            stdout,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    rollout_counted(&stdout).map_err(|e| format!("`cargo run --bin simple`: {e}"))
}

/// `Ok` when `exposition` (Prometheus text) counts exactly one rollout.
pub fn rollout_counted(exposition: &str) -> Result<(), String> {
    let count = exposition
        .lines()
        .find(|line| line.starts_with(ROLLOUT_COUNT))
        .and_then(|line| line.rsplit(' ').next())
        .ok_or_else(|| {
            format!("no {ROLLOUT_COUNT}...}} series: nothing recorded:\n{exposition}")
        })?;
    if count == "1" {
        Ok(())
    } else {
        Err(format!(
            "{count} rollouts counted, expected 1:\n{exposition}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::rollout_counted;

    #[test]
    fn an_exposition_without_the_rollout_fails() {
        let empty =
            "# TYPE target_info gauge\ntarget_info{service_name=\"nemo-gym/orchestrator\"} 1\n";
        assert!(rollout_counted(empty).is_err());
        let two = "gym_rollout_duration_ms_milliseconds_count{otel_scope_name=\"gym-metrics\"} 2\n";
        assert!(rollout_counted(two).is_err());
        let one = "gym_rollout_duration_ms_milliseconds_count{otel_scope_name=\"gym-metrics\"} 1\n";
        assert!(rollout_counted(one).is_ok());
    }
}
