//! Running CI steps: each prints one summary line, and failures are collected.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command};
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

/// Collects the outcome of every step and prints one line per step, and
/// the whole run's wall time.
pub struct Steps {
    results: Vec<(String, bool, f64)>,
    started: Instant,
}

impl Default for Steps {
    fn default() -> Self {
        Self {
            results: Vec::new(),
            started: Instant::now(),
        }
    }
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

    /// Starts `cmd` as the step `name`, to run beside the steps that come
    /// before [`Steps::wait`]; its output goes to `log`, not between theirs.
    pub fn start(&mut self, name: &str, mut cmd: Command, log: PathBuf) -> Background {
        eprintln!(
            "\n==> ci: {name}: started beside the next steps: {cmd:?} > {}",
            log.display()
        );
        let child = log
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| File::create(&log))
            .map_err(|e| format!("could not create the log {}: {e}", log.display()))
            .and_then(|out| {
                let err = out
                    .try_clone()
                    .map_err(|e| format!("{}: {e}", log.display()))?;
                let spawned = cmd.stdout(out).stderr(err).spawn();
                spawned.map_err(|e| format!("could not start {cmd:?}: {e}"))
            });
        Background {
            name: name.to_string(),
            child,
            log,
            start: Instant::now(),
        }
    }

    /// Waits for a step [`Steps::start`] began and shows its output. The
    /// summary gives the time waited here; the step's own time is printed.
    pub fn wait(&mut self, step: Background) -> bool {
        eprintln!("\n==> ci: {}: waiting", step.name);
        let waited = Instant::now();
        let ok = match step.child.and_then(|mut child| {
            child
                .wait()
                .map_err(|e| format!("could not wait for it: {e}"))
        }) {
            Ok(status) => status.success(),
            Err(e) => {
                eprintln!("{e}");
                false
            }
        };
        match std::fs::read(&step.log) {
            Ok(bytes) => eprint!("{}", String::from_utf8_lossy(&bytes)),
            Err(e) => eprintln!("{}: {e}", step.log.display()),
        }
        eprintln!(
            "{}: ran {:.1}s in all",
            step.name,
            step.start.elapsed().as_secs_f64()
        );
        self.record(&format!("{} (waited for)", step.name), ok, waited);
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
        // Steps run beside others overlap: the total is the run's wall time.
        let total = self.started.elapsed().as_secs_f64();
        println!(
            "  total  {total:7.1}s  (wall time, {:.1} min)",
            total / 60.0
        );
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

/// A step running beside others: see [`Steps::start`].
pub struct Background {
    name: String,
    child: Result<Child, String>,
    log: PathBuf,
    start: Instant,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_started_beside_others_is_waited_for_and_its_verdict_kept() {
        let dir = std::env::temp_dir().join(format!("xtask-step-{}", std::process::id()));
        let mut steps = Steps::default();
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo provisioned; sleep 0.2"]);
        let mut failing = Command::new("sh");
        failing.args(["-c", "echo broken >&2; exit 3"]);
        let first = steps.start("ok", ok, dir.join("ok.log"));
        let second = steps.start("failing", failing, dir.join("failing.log"));
        assert!(steps.wait(first));
        assert!(!steps.wait(second));
        let log = std::fs::read_to_string(dir.join("ok.log")).unwrap();
        assert_eq!(log, "provisioned\n");
        let log = std::fs::read_to_string(dir.join("failing.log")).unwrap();
        assert_eq!(log, "broken\n");
        assert!(steps.finish().is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
