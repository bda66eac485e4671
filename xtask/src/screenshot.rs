//! `cargo xtask screenshot`: the picture of `deploy/README.md`, the fleet's metrics graphed
//! in Prometheus's own web UI, taken by headless Chromium, so it can be regenerated.
//!
//! It builds and runs `gym-fleet` (3 resources servers, 2 agents), starts the provisioned
//! Prometheus scraping it every second with `deploy/prometheus/rules.yml` loaded, waits, and
//! screenshots the classic graph page with three queries. Debian's Prometheus ships the
//! classic UI but takes its JavaScript libraries from `libjs-*` packages; those, and
//! `chromium`, must be installed on the host (the error says which command to run).

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gym_testkit::{find_on_path, free_port, http_get, tool_path, Tool};

use crate::step::{cargo, workspace_root};

const SERVERS: u16 = 3;
const AGENTS: u16 = 2;

/// The host packages the classic UI and the browser need.
const HOST_PACKAGES: &str = "chromium libjs-bootstrap4 libjs-eonasdan-bootstrap-datetimepicker \
    libjs-jquery libjs-jquery-hotkeys libjs-moment libjs-moment-timezone libjs-mustache \
    libjs-popper.js libjs-rickshaw libjs-d3 fonts-glyphicons-halflings";

/// The graphs on the picture: (PromQL, what it shows).
const GRAPHS: [(&str, &str); 3] = [
    (
        "sum by (instance) (rate(gym_verify_completed_total[15s])) and on (instance) (gym_verify_completed_total > 0)",
        "verifications per second, per resources server",
    ),
    (
        "job:gym_rollout_duration_ms:quantile_rate5m",
        "rollout duration p50/p95/p99 (recording rule)",
    ),
    (
        "job:gym_verify_success_ratio:rate5m or gym_verify_success_rate",
        "fleet success rate (recording rule) and each server's cumulative gauge",
    ),
];

pub fn run(args: &[String]) -> Result<(), String> {
    let mut out = workspace_root().join("deploy").join("prometheus-ui.png");
    let mut seconds: u64 = 60;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| {
            rest.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--out" => out = PathBuf::from(value("--out")?),
            "--seconds" => {
                seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "--seconds takes a whole number".to_string())?
            }
            other => {
                return Err(format!(
                    "screenshot: unknown argument {other:?} (usage: screenshot [--out PNG] [--seconds N])"
                ))
            }
        }
    }

    let prometheus =
        tool_path(Tool::Prometheus).ok_or("prometheus not provisioned: run `cargo xtask tools`")?;
    let chromium = find_on_path("chromium").ok_or(format!(
        "chromium not found; install: apt-get install {HOST_PACKAGES}"
    ))?;
    let work = std::env::temp_dir().join(format!("gym-screenshot-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let result = shoot(&prometheus, &chromium, &work, &out, seconds);
    let _ = fs::remove_dir_all(&work);
    result?;
    println!("wrote {}", out.display());
    Ok(())
}

fn shoot(
    prometheus: &Path,
    chromium: &Path,
    work: &Path,
    out: &Path,
    seconds: u64,
) -> Result<(), String> {
    let assets = ui_assets(prometheus, &work.join("web"))?;

    eprintln!("==> screenshot: building gym-fleet");
    let status = cargo()
        .args(["build", "-p", "gym-metrics-examples", "--bin", "gym-fleet"])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("cargo build of gym-fleet failed".into());
    }
    let fleet_bin = target_dir().join("debug").join("gym-fleet");

    let base = gym_testkit::free_port_block(1 + SERVERS + AGENTS);
    let targets: Vec<String> = (0..=SERVERS + AGENTS)
        .map(|i| format!("'127.0.0.1:{}'", base + i))
        .collect();
    eprintln!("==> screenshot: gym-fleet on 127.0.0.1:{base}..");
    let _fleet = Killed::new(
        Command::new(&fleet_bin)
            .args(["--servers", &SERVERS.to_string()])
            .args(["--agents", &AGENTS.to_string()])
            .args(["--metrics-port", &base.to_string()])
            .args(["--duration", &(seconds + 120).to_string()])
            .args(["--seed", "7"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", fleet_bin.display()))?,
    );

    let rules = workspace_root()
        .join("deploy")
        .join("prometheus")
        .join("rules.yml");
    let config = work.join("prometheus.yml");
    fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - '{}'\n\
             scrape_configs:\n  - job_name: gym-fleet\n    static_configs:\n      - targets: [{}]\n",
            rules.display(),
            targets.join(", ")
        ),
    )
    .map_err(|e| format!("{}: {e}", config.display()))?;
    let port = free_port();
    let log = fs::File::create(work.join("prometheus.log")).map_err(|e| e.to_string())?;
    let _prometheus = Killed::new(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                work.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg(format!("--web.local-assets={}/", assets.display()))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("{}: {e}", prometheus.display()))?,
    );
    let base_url = format!("http://127.0.0.1:{port}");
    let ready = Instant::now() + Duration::from_secs(30);
    while !matches!(
        http_get(&format!("{base_url}/-/ready"), &[]),
        Ok((200, _, _))
    ) {
        if Instant::now() > ready {
            return Err("prometheus did not become ready".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("==> screenshot: letting the fleet run {seconds} s");
    std::thread::sleep(Duration::from_secs(seconds));

    let mut url = format!("{base_url}/classic/graph?");
    for (i, (expr, what)) in GRAPHS.iter().enumerate() {
        eprintln!("    g{i}: {what}: {expr}");
        url.push_str(&format!(
            "g{i}.expr={}&g{i}.tab=0&g{i}.range_input={seconds}s&",
            encode(expr)
        ));
    }
    let profile = work.join("chromium-profile");
    eprintln!("==> screenshot: chromium");
    let mut browser = Killed::new(
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--window-size=1400,2340",
                "--virtual-time-budget=10000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--screenshot={}", out.display()))
            .arg(&url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", chromium.display()))?,
    );
    let status = browser.wait(Duration::from_secs(120))?;
    if !status {
        return Err("chromium failed".into());
    }
    let size = fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    if size < 10_000 {
        return Err(format!("{}: {size} bytes, not a picture", out.display()));
    }
    Ok(())
}

/// A child process killed (by PID) when dropped.
struct Killed(Child);

impl Killed {
    fn new(child: Child) -> Self {
        Self(child)
    }

    /// Waits up to `timeout` for the process to exit; its success.
    fn wait(&mut self, timeout: Duration) -> Result<bool, String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.0.try_wait() {
                Ok(Some(status)) => return Ok(status.success()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Ok(None) => return Err(format!("still running after {timeout:?}")),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `$CARGO_TARGET_DIR` or `<workspace>/target`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A usable copy of the classic web UI of the Debian Prometheus package next to `prometheus`
/// (`<root>/usr/bin/prometheus` → `<root>/usr/share/prometheus/web`). Its symlinks point to
/// `/usr/share/javascript/...` as if the package were installed; the copy's links point there
/// on this host.
fn ui_assets(prometheus: &Path, dest: &Path) -> Result<PathBuf, String> {
    let real = prometheus
        .canonicalize()
        .map_err(|e| format!("{}: {e}", prometheus.display()))?;
    let root = real
        .ancestors()
        .nth(3)
        .ok_or_else(|| format!("{}: not under <root>/usr/bin", real.display()))?;
    let web = root.join("usr/share/prometheus/web");
    if !web.join("templates/graph.html").is_file() {
        return Err(format!(
            "{} has no classic web UI (templates/graph.html): a Debian prometheus package is needed",
            web.display()
        ));
    }
    let mut missing = Vec::new();
    copy_tree(
        &web,
        dest,
        Path::new("/usr/share/prometheus/web"),
        &mut missing,
    )?;
    if !missing.is_empty() {
        return Err(format!(
            "the classic UI's libraries are missing on this host ({}); install: apt-get install {HOST_PACKAGES}",
            missing.join(", ")
        ));
    }
    Ok(dest.to_path_buf())
}

/// Copies `src` to `dst`; a relative symlink is re-pointed to where it leads when `src` is
/// installed at `installed_at`.
fn copy_tree(
    src: &Path,
    dst: &Path,
    installed_at: &Path,
    missing: &mut Vec<String>,
) -> Result<(), String> {
    fs::create_dir_all(dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    for entry in fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        if kind.is_symlink() {
            let link = fs::read_link(&from).map_err(|e| e.to_string())?;
            let target = normalize(&installed_at.join(&link));
            if !target.exists() {
                missing.push(target.display().to_string());
            }
            std::os::unix::fs::symlink(&target, &to)
                .map_err(|e| format!("{}: {e}", to.display()))?;
        } else if kind.is_dir() {
            copy_tree(&from, &to, &installed_at.join(entry.file_name()), missing)?;
        } else {
            fs::copy(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
        }
    }
    Ok(())
}

/// Resolves `.` and `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_resolve_as_if_installed() {
        assert_eq!(
            normalize(Path::new(
                "/usr/share/prometheus/web/static/../../../javascript/jquery"
            )),
            PathBuf::from("/usr/share/javascript/jquery")
        );
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(
            encode("a{b=\"c\"}[5m] or d"),
            "a%7Bb%3D%22c%22%7D%5B5m%5D%20or%20d"
        );
    }
}
