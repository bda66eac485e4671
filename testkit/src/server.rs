//! A server child process: its temp dir, its log, readiness polling, kill on drop.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::temp_dir::TempDir;

/// How long a server may take to become ready.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(30);
const POLL_EVERY: Duration = Duration::from_millis(50);
const LOG_TAIL_LINES: usize = 30;
const START_ATTEMPTS: usize = 3;

/// A running server; killed by PID (SIGKILL, then reaped) on drop, then its temp dir removed.
#[derive(Debug)]
pub(crate) struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
    // Declared last: removed after the child is dead.
    _dir: TempDir,
}

impl Server {
    /// Spawns `cmd` with stdout and stderr appended to `<dir>/<name>.log`.
    pub(crate) fn spawn(
        name: &'static str,
        mut cmd: Command,
        dir: TempDir,
    ) -> Result<Self, String> {
        let log = dir.path().join(format!("{name}.log"));
        let out = File::create(&log)
            .map_err(|e| format!("{name}: cannot create {}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{name}: cannot share the log file: {e}"))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let child = cmd
            .spawn()
            .map_err(|e| format!("{name}: cannot start {cmd:?}: {e}"))?;
        Ok(Self {
            name,
            child,
            log,
            _dir: dir,
        })
    }

    /// Polls `ready` until it holds; `Err` with the log tail if the process exits or time runs out.
    pub(crate) fn wait_ready(
        &mut self,
        what: &str,
        mut ready: impl FnMut() -> bool,
    ) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.failure(&format!("exited ({status}) before {what}")));
            }
            if ready() {
                return Ok(());
            }
            if start.elapsed() > READY_TIMEOUT {
                return Err(self.failure(&format!("not {what} after {READY_TIMEOUT:?}")));
            }
            std::thread::sleep(POLL_EVERY);
        }
    }

    fn failure(&self, what: &str) -> String {
        format!(
            "{} (pid {}) {what}; last lines of {}:\n{}",
            self.name,
            self.child.id(),
            self.log.display(),
            self.log_tail()
        )
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the server's own output.
    pub(crate) fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `start` again (with fresh free ports) when a server lost a port race.
pub(crate) fn retry_on_port_clash<T>(
    mut start: impl FnMut() -> Result<T, String>,
) -> Result<T, String> {
    let mut attempt = 1;
    loop {
        match start() {
            Err(e)
                if attempt < START_ATTEMPTS
                    && e.to_ascii_lowercase().contains("address already in use") =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}
