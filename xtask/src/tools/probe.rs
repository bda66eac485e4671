//! Running a tool once to read its version.

use std::path::Path;
use std::process::{Command, Stdio};

/// The first line the tool prints for `args` (empty if it prints nothing).
///
/// `Err` if it cannot be started, or it fails without printing anything.
pub fn version(path: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    // Some tools (wrk) exit non-zero after printing their version with their usage.
    if output.status.success() || !first.is_empty() {
        Ok(first)
    } else {
        Err(format!(
            "{} {} failed ({})",
            path.display(),
            args.join(" "),
            output.status
        ))
    }
}
