//! Running CI steps: each prints one summary line, and failures are collected.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// The workspace root (the parent of this crate's folder).
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}

/// The cargo target folder: `$CARGO_TARGET_DIR` (a relative one taken from
/// the workspace root, where xtask runs cargo) or `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// `cargo` as invoked by the user (respects `$CARGO`).
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace_root());
    cmd
}

/// Runs `cmd` to completion, its output on this terminal; `Err` names the
/// command and how it ended.
pub fn run_status(mut cmd: Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("could not start {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

/// Collects the outcome of every step and prints one line per step.
#[derive(Default)]
pub struct Steps {
    results: Vec<(String, bool, f64)>,
}

impl Steps {
    /// Runs `cmd` as the step `name`.
    pub fn command(&mut self, name: &str, mut cmd: Command) -> bool {
        eprintln!("\n==> ci: {name}: {cmd:?}");
        let start = Instant::now();
        let ok = match cmd.status() {
            Ok(status) => status.success(),
            Err(e) => {
                eprintln!("could not start {cmd:?}: {e}");
                false
            }
        };
        self.record(name, ok, start);
        ok
    }

    /// Runs an in-process step.
    pub fn check(&mut self, name: &str, f: impl FnOnce() -> Result<(), String>) -> bool {
        eprintln!("\n==> ci: {name}");
        let start = Instant::now();
        let ok = match f() {
            Ok(()) => true,
            Err(e) => {
                eprintln!("{name}: {e}");
                false
            }
        };
        self.record(name, ok, start);
        ok
    }

    fn record(&mut self, name: &str, ok: bool, start: Instant) {
        let secs = start.elapsed().as_secs_f64();
        let verdict = if ok { "ok" } else { "FAILED" };
        eprintln!("==> ci: {name}: {verdict} ({secs:.1}s)");
        self.results.push((name.to_string(), ok, secs));
    }

    /// Prints the summary table; `Err` if any step failed.
    pub fn finish(self) -> Result<(), String> {
        println!("\nci summary:");
        for (name, ok, secs) in &self.results {
            let verdict = if *ok { "ok    " } else { "FAILED" };
            println!("  {verdict} {secs:7.1}s  {name}");
        }
        let failed = self.results.iter().filter(|(_, ok, _)| !ok).count();
        let passed = self.results.len() - failed;
        println!("ci: {passed} passed, {failed} failed");
        if failed == 0 {
            Ok(())
        } else {
            Err(format!("{failed} ci step(s) failed"))
        }
    }
}
