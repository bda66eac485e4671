//! `/metrics` under wrk: our endpoint and a fixed-body hyper server, one
//! after the other, 2 threads, 32 connections, 10 s each, loopback only.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// wrk's settings, as the report prints them.
pub const ARGS: [&str; 4] = ["-t2", "-c32", "-d10s", "--latency"];

/// One wrk run's figures.
#[derive(Debug, Clone, Default)]
pub struct WrkResult {
    /// Requests per second.
    pub requests_per_sec: f64,
    /// Mean latency, as wrk prints it (e.g. `1.20ms`).
    pub latency_avg: String,
    /// 99th percentile latency, as wrk prints it.
    pub latency_p99: String,
}

/// wrk: `target/tools/bin/wrk` (as `cargo xtask tools` provisions it), then `PATH`.
pub fn wrk_path() -> PathBuf {
    let provisioned = gym_testkit::tools_bin_dir().join("wrk");
    if provisioned.exists() {
        provisioned
    } else {
        PathBuf::from("wrk")
    }
}

/// A server child that prints its URL (and optional extra lines) first; it
/// stops when dropped (its standard input closes, then it is killed).
pub struct Server {
    child: Child,
    /// The URL it serves.
    pub url: String,
    /// Further lines it printed at start-up.
    pub extra: Vec<String>,
}

impl Server {
    /// Starts `program args…` and reads `1 + extra_lines` lines of its output.
    ///
    /// # Errors
    /// It could not start or closed its output early.
    pub fn start(program: &Path, args: &[String], extra_lines: usize) -> Result<Self, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", program.display()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| format!("{}: no stdout", program.display()))?;
        let mut lines = BufReader::new(stdout).lines();
        let mut next = || -> Result<String, String> {
            match lines.next() {
                Some(Ok(line)) => Ok(line),
                _ => Err(format!(
                    "{} exited before printing its URL",
                    program.display()
                )),
            }
        };
        let url = next()?;
        let extra = (0..extra_lines).map(|_| next()).collect::<Result<_, _>>()?;
        Ok(Self { child, url, extra })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        // It exits on stdin EOF; kill it if it has not.
        std::thread::sleep(std::time::Duration::from_millis(200));
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Runs wrk against `url`.
///
/// # Errors
/// wrk could not run or printed no `Requests/sec`.
pub fn run(url: &str) -> Result<WrkResult, String> {
    run_with(url, &ARGS)
}

/// Runs wrk with `args` against `url`.
///
/// # Errors
/// wrk could not run or printed no `Requests/sec`.
pub fn run_with(url: &str, args: &[&str]) -> Result<WrkResult, String> {
    let wrk = wrk_path();
    let output = Command::new(&wrk)
        .args(args)
        .arg(url)
        .output()
        .map_err(|e| {
            format!(
                "running {} (cargo xtask tools provisions it): {e}",
                wrk.display()
            )
        })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!("{text}");
    parse(&text).ok_or_else(|| format!("could not read wrk's output:\n{text}"))
}

/// Reads `Requests/sec`, the mean latency and the 99% latency from wrk's output.
pub fn parse(text: &str) -> Option<WrkResult> {
    let field = |prefix: &str, index: usize| {
        text.lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.split_whitespace().nth(index))
            .map(str::to_string)
    };
    Some(WrkResult {
        requests_per_sec: field("Requests/sec:", 1)?.parse().ok()?,
        latency_avg: field("Latency ", 1).unwrap_or_default(),
        latency_p99: field("99%", 1).unwrap_or_default(),
    })
}
