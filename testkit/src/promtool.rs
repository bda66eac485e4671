//! `promtool check metrics` on an exposition text.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::tool::{tool_path, Tool};

/// What `promtool check metrics` says of the contract's own names, whatever
/// else an exposition holds: `gym.rollout.duration_ms` and
/// `gym.verify.duration_ms` are milliseconds by the contract, and promtool
/// wants base units without abbreviations.
///
/// ```
/// let known = gym_testkit::contract_findings();
/// assert_eq!(known.len(), 4);
/// assert!(known.contains("gym_verify_duration_ms_milliseconds metric names should not contain abbreviated units"));
/// ```
pub fn contract_findings() -> std::collections::BTreeSet<String> {
    let mut known = std::collections::BTreeSet::new();
    for name in [
        "gym_rollout_duration_ms_milliseconds",
        "gym_verify_duration_ms_milliseconds",
    ] {
        known.insert(format!(
            "{name} metric names should not contain abbreviated units"
        ));
        known.insert(format!(
            "{name} use base unit \"seconds\" instead of \"milliseconds\""
        ));
    }
    known
}

/// promtool check metrics on the given exposition text: returns promtool's findings
/// (lines; empty when the text is clean), or `Err` if promtool could not run.
pub fn promtool_check_metrics(exposition: &str) -> Result<Vec<String>, String> {
    let binary =
        tool_path(Tool::Promtool).ok_or("promtool not provisioned, run `cargo xtask tools`")?;
    let mut child = Command::new(&binary)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let written = child
        .stdin
        .take()
        .ok_or("promtool has no stdin")
        .and_then(|mut stdin| {
            stdin
                .write_all(exposition.as_bytes())
                .map_err(|_| "promtool closed its stdin")
        });
    let output = child
        .wait_with_output()
        .map_err(|e| format!("promtool check metrics did not finish: {e}"))?;
    let findings: Vec<String> = [&output.stdout, &output.stderr]
        .iter()
        .flat_map(|stream| {
            String::from_utf8_lossy(stream)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|line| !line.trim().is_empty())
        .collect();
    // promtool exits 0 when clean, 3 on lint findings and 1 on a parse error (a finding too).
    match output.status.code() {
        Some(0) => Ok(findings),
        Some(_) if !findings.is_empty() => Ok(findings),
        _ => Err(format!(
            "promtool check metrics failed ({}) without findings{}",
            output.status,
            written.err().map(|e| format!("; {e}")).unwrap_or_default()
        )),
    }
}
