//! Checks an artifact must pass before `dist` accepts it.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Byte patterns that only a backend crate leaves in a binary: crate paths of
/// panic locations (`prometheus-0.14.0/src/...`), type and module paths, and
/// mangled symbol fragments.
pub const BACKEND_PATTERNS: &[&str] = &[
    "opentelemetry",
    "prometheus-0.",
    "prometheus::",
    "10prometheus",
    "tonic",
    "reqwest",
];

/// The backend patterns found in `bytes`.
pub fn backend_patterns_in(bytes: &[u8]) -> Vec<&'static str> {
    BACKEND_PATTERNS
        .iter()
        .copied()
        .filter(|p| bytes.windows(p.len()).any(|w| w == p.as_bytes()))
        .collect()
}

/// The no-op binary must contain no symbol, path or name of a backend crate.
pub fn no_backend_symbols(artifact: &Path) -> Result<(), String> {
    let bytes = std::fs::read(artifact).map_err(|e| format!("read {}: {e}", artifact.display()))?;
    let found = backend_patterns_in(&bytes);
    if !found.is_empty() {
        return Err(format!(
            "{} contains backend crate names: {found:?}",
            artifact.display()
        ));
    }
    // Symbols too, where the profile left any (`nm` prints nothing when stripped).
    if let Ok(out) = Command::new("nm").arg("-C").arg(artifact).output() {
        let found = backend_patterns_in(&out.stdout);
        if !found.is_empty() {
            return Err(format!("symbols of backend crates: {found:?}"));
        }
    }
    Ok(())
}

/// Kills the child on every exit path.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

fn sigterm(child: &Child) -> Result<(), String> {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .map_err(|e| format!("kill -TERM: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kill -TERM {} failed", child.id()))
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> Result<std::process::ExitStatus, String> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status);
        }
        if start.elapsed() > limit {
            return Err(format!("did not exit within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The prom artifact starts, serves `/metrics` on a free loopback port and
/// exits 0 on SIGTERM.
pub fn prom_serves_metrics(artifact: &Path) -> Result<String, String> {
    let port = free_port()?;
    let child = Command::new(artifact)
        .args([
            "--servers",
            "1",
            "--agents",
            "0",
            "--metrics-port",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("start {}: {e}", artifact.display()))?;
    let mut running = Running(child);
    let url = format!("http://127.0.0.1:{port}/metrics");
    // The endpoint is up before the servers are, so wait for the fleet size.
    let start = Instant::now();
    let mut last = String::from("no answer");
    loop {
        if let Ok((200, _, body)) = gym_testkit::http_get(&url, &[]) {
            last = String::from_utf8_lossy(&body).into_owned();
            if last.contains("gym_servers_active") {
                break;
            }
        }
        if start.elapsed() > Duration::from_secs(20) {
            return Err(format!(
                "{url} served no gym_servers_active series within 20 s; last answer:\n{last}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    sigterm(&running.0)?;
    let stopped = Instant::now();
    let status = wait_exit(&mut running.0, Duration::from_secs(15))?;
    if !status.success() {
        return Err(format!("exited with {status} after SIGTERM"));
    }
    Ok(format!(
        "serves /metrics; exits 0 on SIGTERM in {:.1} s",
        stopped.elapsed().as_secs_f64()
    ))
}

/// Runs `command` to its exit (at most `limit`), its standard output then its
/// standard error collected while it runs: read only after the exit, a
/// child writing more than a pipe holds (64 KiB) would block forever.
fn run_collecting(
    mut command: Command,
    limit: Duration,
) -> Result<(std::process::ExitStatus, String), String> {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let mut running = Running(child);
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(running.0.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(running.0.stderr.take().map(|p| Box::new(p) as _));
    let status = wait_exit(&mut running.0, limit)?;
    let mut output = out.join().unwrap_or_default();
    output.push_str(&err.join().unwrap_or_default());
    Ok((status, output))
}

/// The otel artifact, with the console exporter, prints an export that parses
/// as JSON and names the gym instruments.
pub fn otel_console_export(artifact: &Path) -> Result<String, String> {
    let mut command = Command::new(artifact);
    command
        .args(["--servers", "1", "--agents", "0", "--duration", "3"])
        .env("OTEL_METRICS_EXPORTER", "console")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500");
    let (status, output) = run_collecting(command, Duration::from_secs(30))
        .map_err(|e| format!("{}: {e}", artifact.display()))?;
    if !status.success() {
        return Err(format!("exited with {status}:\n{output}"));
    }
    let exports = output
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.to_string().contains("gym.servers.active"))
        .count();
    if exports == 0 {
        return Err(format!(
            "no JSON export naming gym.servers.active in the output:\n{output}"
        ));
    }
    Ok(format!(
        "console exporter printed {exports} parsable export(s)"
    ))
}

/// Crates that only a backend needs; none may appear in the no-op build.
pub const BACKEND_ONLY_CRATES: &[&str] = &[
    "opentelemetry",
    "prometheus",
    "reqwest",
    "tonic",
    // The TLS stack (issue 17): rustls and rustls-*, its tokio/hyper glue, ring.
    "rustls",
    "tokio-rustls",
    "hyper-rustls",
    "ring",
    // The kit the recording backends share: the no-op backend needs none of it.
    "gym-metrics-kit",
];

/// `cargo tree` of the no-op build of the examples must name no backend-only crate.
pub fn noop_tree_is_clean() -> Result<(), String> {
    let out = crate::step::cargo()
        .args([
            "tree",
            "-p",
            "gym-metrics-examples",
            "--no-default-features",
            "--features",
            "noop",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .map_err(|e| format!("could not run cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let tree = String::from_utf8_lossy(&out.stdout);
    let offenders: Vec<&str> = tree
        .lines()
        .filter(|line| {
            let name = line.split_whitespace().next().unwrap_or("");
            BACKEND_ONLY_CRATES.iter().any(|c| {
                name == *c
                    || name.starts_with(&format!("{c}-"))
                    || name.starts_with(&format!("{c}_"))
            })
        })
        .collect();
    if offenders.is_empty() {
        eprintln!(
            "{} crates in the noop build, none backend-only",
            tree.lines().count()
        );
        Ok(())
    } else {
        Err(format!(
            "the noop build pulls in backend crates: {offenders:?}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::backend_patterns_in;

    #[test]
    fn a_child_printing_more_than_a_pipe_holds_is_read_to_its_exit() {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "head -c 300000 /dev/zero | tr '\\0' x; echo done >&2"]);
        let (status, output) =
            super::run_collecting(command, std::time::Duration::from_secs(20)).unwrap();
        assert!(status.success());
        assert_eq!(output.len(), 300_000 + "done\n".len());
    }

    #[test]
    fn finds_backend_crate_paths_and_nothing_in_clean_bytes() {
        let dirty = b"xx/registry/src/prometheus-0.14.0/src/lib.rs\0opentelemetry_sdk::metrics";
        assert_eq!(
            backend_patterns_in(dirty),
            vec!["opentelemetry", "prometheus-0."]
        );
        assert!(backend_patterns_in(b"gym-fleet --prometheus-config FILE").is_empty());
    }
}
