//! Running a provisioning command: its failure names the tool and the step.

use std::process::{Command, Output};

/// Runs `cmd` to completion; `Err("<what>: <step> failed ...")` with its output's tail.
pub fn checked(what: &str, step: &str, cmd: &mut Command) -> Result<Output, String> {
    let start = std::time::Instant::now();
    let output = cmd
        .output()
        .map_err(|e| format!("{what}: {step}: cannot run {:?}: {e}", cmd.get_program()))?;
    eprintln!(
        "tools: {what}: {step} ({:.1}s)",
        start.elapsed().as_secs_f64()
    );
    if output.status.success() {
        return Ok(output);
    }
    Err(format!(
        "{what}: {step} failed ({}): {cmd:?}\n{}",
        output.status,
        tail(&output)
    ))
}

/// The last lines of a command's stdout and stderr.
pub fn tail(output: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
