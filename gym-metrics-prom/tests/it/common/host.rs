//! A host process to attack: the test binary run again (its test named by
//! the caller, which calls [`child_main`]), with `RLIMIT_NOFILE` set to 64
//! between fork and exec, serving `/metrics` from the Prometheus backend
//! (over TLS with basic auth when given a web configuration) and a
//! `POST /verify` and `GET /stats` of its own, as a resources server does.
//! Killed by PID and reaped when dropped.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gym_metrics_api::Role;
use gym_metrics_prom::{PrometheusBuilder, PrometheusGuard};

use super::exposition::parse;

/// The child's marker: when set, the child test is the host.
const CHILD_VAR: &str = "GYM_ENDPOINT_HOST_CHILD";
/// The web configuration the child serves `/metrics` with, if any.
const WEB_CONFIG_VAR: &str = "GYM_ENDPOINT_HOST_WEB_CONFIG";
/// When set, `/metrics` carries this many more bytes (about) of series of
/// the host's own registry: an answer larger than the kernel's buffers.
const PADDING_VAR: &str = "GYM_ENDPOINT_HOST_PADDING_BYTES";
/// The host's descriptor limit, soft and hard.
pub const DESCRIPTOR_LIMIT: u64 = 64;
/// The endpoint's cap under it: a quarter, less its own 4 descriptors.
pub const EXPECTED_CAP: u64 = 12;
/// The child exits by itself after this, should the parent be gone.
pub const CHILD_HARD_LIMIT: Duration = Duration::from_secs(120);
/// The lines the endpoint logs at most once a minute each (one cause each).
pub const RATE_LIMITED_LINES: &[&str] = &[
    "closed the oldest one",
    "closed a metrics connection with no request",
    "closed a metrics connection whose answer was not all on the socket",
    "before reading the answer before it (pipelining)",
    "accepting a metrics connection failed",
    "metrics connection ended",
    "TLS handshake failed",
    "refused a metrics request",
];

// ---- the child: the host process ----

struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        eprintln!("LOG {} {}", record.level(), record.args());
    }
    fn flush(&self) {}
}

/// The host's body: a no-op unless this process is the child.
pub fn child_main() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    log::set_logger(&StderrLogger).unwrap();
    log::set_max_level(log::LevelFilter::Debug);
    let mut builder = PrometheusBuilder::new()
        .role(Role::server("limits-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0));
    if let Some(web) = std::env::var_os(WEB_CONFIG_VAR) {
        builder = with_web_config(builder, Path::new(&web));
    }
    if let Some(bytes) = std::env::var(PADDING_VAR).ok().and_then(|b| b.parse().ok()) {
        builder = builder.with_registry(padding(bytes));
    }
    let guard = builder.install().unwrap();
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    println!(
        "READY {} {}",
        guard.local_addr(),
        host.local_addr().unwrap()
    );
    std::io::stdout().flush().unwrap();
    let started = Instant::now();
    while started.elapsed() < CHILD_HARD_LIMIT {
        match host.accept() {
            Ok((stream, _)) => answer_host_request(stream, &guard),
            // Nothing waiting, or out of descriptors: try again shortly.
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// A registry of about `bytes` of exposition: one counter with a 200-byte
/// label value per series.
fn padding(bytes: usize) -> prometheus::Registry {
    let registry = prometheus::Registry::new();
    let padding = prometheus::IntCounterVec::new(
        prometheus::Opts::new("host_padding_total", "Bulk."),
        &["pad"],
    )
    .unwrap();
    registry.register(Box::new(padding.clone())).unwrap();
    let line = "host_padding_total{pad=\"\"} 1\n".len() + 200;
    for i in 0..bytes / line {
        padding.with_label_values(&[&format!("{i:0>200}")]).inc();
    }
    registry
}

#[cfg(feature = "web-config")]
fn with_web_config(builder: PrometheusBuilder, web: &Path) -> PrometheusBuilder {
    builder.web_config_file(web)
}

#[cfg(not(feature = "web-config"))]
fn with_web_config(_: PrometheusBuilder, _: &Path) -> PrometheusBuilder {
    panic!("a web configuration needs the web-config feature")
}

/// The host's own service: `POST /verify` records a verification, `GET /stats`
/// tells the endpoint's counts.
fn answer_host_request(mut stream: TcpStream, guard: &PrometheusGuard) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let Some((head, _body)) = read_request(&mut stream) else {
        return;
    };
    let (status, body) = match head.split_whitespace().take(2).collect::<Vec<_>>()[..] {
        ["POST", "/verify"] => {
            gym_metrics_api::record_verify_ms(5.0, true);
            ("200 OK", "verified\n".to_string())
        }
        ["GET", "/stats"] => {
            let s = guard.endpoint_stats();
            let body = format!(
                "max_connections {}\nopen_connections {}\naccepted {}\nevicted {}\nidle_timeouts {}\nwrite_timeouts {}\npipelining_closes {}\naccept_errors {}\ntls_handshake_failures {}\nauth_refusals {}\n",
                s.max_connections, s.open_connections, s.accepted, s.evicted, s.idle_timeouts,
                s.write_timeouts, s.pipelining_closes, s.accept_errors, s.tls_handshake_failures,
                s.auth_refusals
            );
            ("200 OK", body)
        }
        _ => ("404 Not Found", "not found\n".to_string()),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}

/// The head (as text) and body of one request, by `Content-Length`.
fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut buf).ok().filter(|&n| n > 0)?;
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = raw[end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok().filter(|&n| n > 0)?;
        body.extend_from_slice(&buf[..n]);
    }
    Some((head, body))
}

// ---- the parent: the host, attacked ----

/// The host child; killed by PID and reaped on drop.
pub struct Host {
    child: Child,
    pub metrics: SocketAddr,
    pub service: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Host {
    /// Runs `child_test` (a test that calls [`child_main`]) of this binary as
    /// the host, serving `/metrics` with `web_config` if given.
    pub fn start(child_test: &str, web_config: Option<&Path>) -> Self {
        Self::start_padded(child_test, web_config, 0)
    }

    /// The same, with about `padding` bytes more in each exposition.
    pub fn start_padded(child_test: &str, web_config: Option<&Path>, padding: usize) -> Self {
        let exe = std::env::current_exe().unwrap();
        let mut command = Command::new(exe);
        command
            .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
            .env(CHILD_VAR, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(web) = web_config {
            command.env(WEB_CONFIG_VAR, web);
        }
        if padding > 0 {
            command.env(PADDING_VAR, padding.to_string());
        }
        // SAFETY: setrlimit is one system call, async-signal-safe, and
        // rlimit's wrapper neither allocates nor locks.
        unsafe {
            command.pre_exec(|| {
                rlimit::setrlimit(rlimit::Resource::NOFILE, DESCRIPTOR_LIMIT, DESCRIPTOR_LIMIT)
            });
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = Arc::clone(&stderr);
            std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stderr_pipe).lines() {
                    let Ok(line) = line else { break };
                    let mut text = stderr.lock().unwrap();
                    text.push_str(&line);
                    text.push('\n');
                }
            });
        }
        let (ready, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // libtest prints the test's name on the same line first.
                if let Some((_, addrs)) = line.split_once("READY ") {
                    let _ = ready.send(addrs.to_string());
                }
            }
        });
        let host = |metrics, service| Host {
            child,
            metrics,
            service,
            stderr: Arc::clone(&stderr),
        };
        let addrs = match ready_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addrs) => addrs,
            Err(_) => {
                let dummy: SocketAddr = "127.0.0.1:9".parse().unwrap();
                let h = host(dummy, dummy);
                panic!("the host never got ready:\n{}", h.log());
            }
        };
        let mut parts = addrs.split(' ').map(|a| a.parse::<SocketAddr>().unwrap());
        host(parts.next().unwrap(), parts.next().unwrap())
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The soft and hard `Max open files` of the host, as the kernel says.
    pub fn descriptor_limit(&self) -> (u64, u64) {
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", self.pid())).unwrap();
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .unwrap();
        let mut numbers = line.split_whitespace().filter_map(|w| w.parse().ok());
        (numbers.next().unwrap(), numbers.next().unwrap())
    }

    pub fn open_descriptors(&self) -> usize {
        open_descriptors(self.pid())
    }

    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid())
    }

    /// `GET /metrics` over plain HTTP: the time it took and
    /// `gym_verify_completed_total`.
    pub fn scrape(&self) -> (Duration, u64) {
        let started = Instant::now();
        let (status, body) = request(
            self.metrics,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .unwrap_or_else(|e| panic!("GET /metrics: {e}\n{}", self.log()));
        let took = started.elapsed();
        assert_eq!(status, 200, "GET /metrics");
        (took, verify_completed(&body))
    }

    /// The host's own `POST /verify`: the time it took.
    pub fn verify(&self) -> Duration {
        let started = Instant::now();
        let (status, body) = request(
            self.service,
            "POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
        )
        .unwrap_or_else(|e| panic!("POST /verify: {e}\n{}", self.log()));
        assert_eq!((status, body.as_str()), (200, "verified\n"), "POST /verify");
        started.elapsed()
    }

    pub fn stats(&self) -> BTreeMap<String, u64> {
        let (status, body) = request(
            self.service,
            "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .unwrap_or_else(|e| panic!("GET /stats: {e}\n{}", self.log()));
        assert_eq!(status, 200);
        body.lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
            .collect()
    }

    /// Polls the stats until `done` holds or `within` passes; the last stats.
    pub fn stats_once(
        &self,
        within: Duration,
        done: impl Fn(&BTreeMap<String, u64>) -> bool,
    ) -> BTreeMap<String, u64> {
        let started = Instant::now();
        loop {
            let stats = self.stats();
            if done(&stats) || started.elapsed() > within {
                return stats;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Each rate-limited line at most once: a minute has not passed.
    pub fn assert_each_cause_logged_once_at_most(&self) {
        let log = self.log();
        for line in RATE_LIMITED_LINES {
            let count = log.matches(line).count();
            assert!(count <= 1, "{line:?} logged {count} times:\n{log}");
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `gym_verify_completed_total` of a text exposition.
pub fn verify_completed(body: &str) -> u64 {
    let families = parse(body);
    families["gym_verify_completed_total"]
        .samples
        .values()
        .next()
        .map(|v| *v as u64)
        .unwrap()
}

/// The most descriptors and resident memory a process held while sampled.
pub struct Peak {
    stop: Arc<AtomicBool>,
    sampler: std::thread::JoinHandle<(usize, u64)>,
}

impl Peak {
    /// Samples `host` every millisecond until [`Peak::stop`].
    pub fn sample(host: &Host) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let pid = host.pid();
        let sampler = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let (mut fds, mut rss) = (0, 0);
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) && started.elapsed() < CHILD_HARD_LIMIT {
                    fds = fds.max(open_descriptors(pid));
                    rss = rss.max(rss_kib(pid));
                    std::thread::sleep(Duration::from_millis(1));
                }
                (fds, rss)
            })
        };
        Self { stop, sampler }
    }

    /// The peak descriptors and RSS (KiB).
    pub fn stop(self) -> (usize, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.sampler.join().unwrap()
    }
}

fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Sends `raw`, reads the whole answer: status and body (as text).
pub fn request(addr: SocketAddr, raw: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(raw.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no end of headers: {text:?}")))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line: {head:?}")))?;
    Ok((status, body.to_string()))
}

/// True when the server has closed `stream` (EOF or reset), false while open.
pub fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}
