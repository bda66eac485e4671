//! Running the real `gym-fleet` binary from a test: its output, its process
//! ids, signals, and the `fleet:` summary line; the scenarios both backends
//! pass; the operator kit's files and the dashboard's queries.

// The NeMo Gym tests: the otel one (`nemo_gym_e2e.rs`), the prom one
// (`nemo_gym_trace_e2e.rs`).
#[cfg(any(feature = "otel", feature = "prom"))]
pub mod gym_python;
pub mod scenarios;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `gym-fleet` orchestrator whose output is collected line by line.
pub struct Fleet {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Fleet {
    /// Starts `gym-fleet` with `args` and extra environment.
    pub fn start(args: &[String], env: &[(&str, String)]) -> Self {
        Self::start_command(Command::new(env!("CARGO_BIN_EXE_gym-fleet")), args, env)
    }

    /// Like [`Fleet::start`], through `command`: `gym-fleet` itself, or a
    /// wrapper that execs it (e.g. `prlimit … -- gym-fleet`, same PID).
    pub fn start_command(mut command: Command, args: &[String], env: &[(&str, String)]) -> Self {
        let mut child = command
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("gym-fleet starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        for stream in [
            Box::new(stdout) as Box<dyn std::io::Read + Send>,
            Box::new(stderr),
        ] {
            let lines = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            });
        }
        Self { child, lines }
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// Waits for a printed line satisfying `pred`.
    pub fn wait_line(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(line) = self.lines.lock().unwrap().iter().find(|l| pred(l)) {
                return Some(line.clone());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// The pid of the launched process `name`, from the `processes:` listing.
    pub fn pid_of(&self, name: &str) -> u32 {
        let line = self
            .wait_line(Duration::from_secs(15), |l| {
                let mut words = l.split_whitespace();
                words.next() == Some(name) && words.next() == Some("pid")
            })
            .unwrap_or_else(|| panic!("no pid listed for {name}:\n{}", self.output()));
        line.split_whitespace()
            .nth(2)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unreadable pid in {line:?}"))
    }

    /// The orchestrator's own pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the orchestrator to exit; its status and its whole output.
    pub fn wait(&mut self, timeout: Duration) -> (ExitStatus, String) {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader threads drain the pipes.
                std::thread::sleep(Duration::from_millis(200));
                return (status, self.output());
            }
            if Instant::now() > deadline {
                panic!(
                    "gym-fleet still running after {timeout:?}:\n{}",
                    self.output()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        // Its children stop on their own once its pipes close.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `signal` (e.g. `KILL`, `TERM`) to `pid`.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// The `key=value` pairs of the summary's last `fleet:` line, as numbers.
pub fn fleet_summary(output: &str) -> BTreeMap<String, f64> {
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with("fleet: "))
        .unwrap_or_else(|| panic!("no `fleet:` summary line in:\n{output}"));
    line.split_whitespace()
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// Flags for a fast fleet (short delays, many rollouts) with `pass_ratio`.
pub fn fast_fleet_args(servers: u16, agents: u16, pass_ratio: f64) -> Vec<String> {
    [
        "--servers",
        &servers.to_string(),
        "--agents",
        &agents.to_string(),
        "--seed",
        "7",
        "--pass-ratio",
        &pass_ratio.to_string(),
        "--error-ratio",
        "0.05",
        "--generate-ms",
        "20..150",
        "--verify-ms",
        "5..60",
        "--concurrency",
        "8",
        "--drain",
        "3",
    ]
    .map(String::from)
    .to_vec()
}

/// The `completed` column of `agent`'s line in the fleet's final summary.
// The scale tests' only: the other test binaries including this module do not.
#[allow(dead_code)]
pub fn agent_completed(output: &str, agent: &str) -> f64 {
    let summary = output
        .rsplit_once("\nsummary\n")
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no summary in:\n{output}"));
    summary
        .lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(agent))
                .then(|| words.nth(1).and_then(|w| w.parse().ok()))
                .flatten()
        })
        .unwrap_or_else(|| panic!("no summary line for {agent}:\n{summary}"))
}

/// `deploy/` and `parts` below it: the operator's kit.
pub fn deploy_file(parts: &[&str]) -> PathBuf {
    let mut path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("deploy");
    for p in parts {
        path.push(p);
    }
    path
}

/// Every panel query of the dashboard, with its variables filled in (`$job`
/// as `job`, the rate interval as 1m), each with its panel's title.
pub fn panel_queries(job: &str) -> Vec<(String, String)> {
    let path = deploy_file(&["grafana", "gym-fleet.json"]);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dash: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut queries = Vec::new();
    for p in dash["panels"].as_array().expect("panels") {
        for panel in std::iter::once(p).chain(p["panels"].as_array().into_iter().flatten()) {
            for t in panel["targets"].as_array().into_iter().flatten() {
                let expr = t["expr"]
                    .as_str()
                    .unwrap_or_default()
                    .replace("$__rate_interval", "1m")
                    .replace("${job}", job)
                    .replace("$job", job);
                let title = format!("panel {:?} {}", panel["title"], t["refId"]);
                queries.push((title, expr));
            }
        }
    }
    queries
}
