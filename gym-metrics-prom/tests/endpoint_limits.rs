//! The endpoint's limits under attack (RELIABILITY.md, "Endpoint limits"):
//! a host process started with a 64-descriptor limit serves `/metrics` from
//! the Prometheus backend and a `POST /verify` of its own, as a resources
//! server does. While 70 idle connections are held open on `/metrics`, or
//! clients pipeline GETs and never read, a new scrape and the host's own
//! `/verify` must both be answered within 2 s, the endpoint must stay within
//! its cap, the attackers must be closed by the server (eviction, idle and
//! write timeouts, counted), and each cause must be logged once at most.
//!
//! The host is this test binary again (`child_host_serving_metrics_and_verify`),
//! with `RLIMIT_NOFILE` set to 64 between fork and exec, and killed by PID
//! when the test ends.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::exposition::parse;
use gym_metrics_api::Role;
use gym_metrics_prom::{PrometheusBuilder, PrometheusGuard};

/// The child's marker: when set, the child test is the host.
const CHILD_VAR: &str = "GYM_ENDPOINT_LIMITS_CHILD";
/// The host's descriptor limit, soft and hard.
const DESCRIPTOR_LIMIT: u64 = 64;
/// The endpoint's cap under it: a quarter, less its own 4 descriptors.
const EXPECTED_CAP: u64 = 12;
/// Idle connections the first attack holds open (more than the limit itself).
const IDLE_CONNECTIONS: usize = 70;
/// Clients of the second attack that pipeline GETs and never read.
const NEVER_READERS: usize = 4;
/// The most GETs one never-reading client sends (~37 MB): more than the
/// kernel buffers between the two hold (a few MB), and their answers far more.
const MOST_PIPELINED: usize = 1_000_000;
/// Scrapes and verifications sent during each attack.
const PROBES: usize = 5;
/// What "answered" means during an attack.
const ANSWER_BOUND: Duration = Duration::from_secs(2);
/// The endpoint's idle and write timeouts (10 s each), plus slack.
const TIMEOUT_AND_SLACK: Duration = Duration::from_secs(10 + 6);
/// Resident memory the host may gain during an attack (each connection's
/// buffers are capped at 64 KiB).
const RSS_GROWTH_BOUND_KIB: u64 = 32 * 1024;
/// The child exits by itself after this, should the parent be gone.
const CHILD_HARD_LIMIT: Duration = Duration::from_secs(120);
/// The lines each attack may log at most once (one cause each).
const RATE_LIMITED_LINES: &[&str] = &[
    "closed the oldest idle one",
    "closed a metrics connection with no request",
    "closed a metrics connection whose client read nothing",
    "refused a metrics connection",
    "accepting a metrics connection failed",
    "metrics connection ended",
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

/// Runs in the child only (a no-op in the parent's run).
#[test]
fn child_host_serving_metrics_and_verify() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    log::set_logger(&StderrLogger).unwrap();
    log::set_max_level(log::LevelFilter::Debug);
    let guard = PrometheusBuilder::new()
        .role(Role::server("limits-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
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
                "max_connections {}\nopen_connections {}\naccepted {}\nevicted {}\nrefused {}\nidle_timeouts {}\nwrite_timeouts {}\naccept_errors {}\n",
                s.max_connections, s.open_connections, s.accepted, s.evicted, s.refused,
                s.idle_timeouts, s.write_timeouts, s.accept_errors
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
struct Host {
    child: Child,
    metrics: SocketAddr,
    service: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Host {
    fn start() -> Self {
        let exe = std::env::current_exe().unwrap();
        let mut command = Command::new(exe);
        command
            .args([
                "--exact",
                "child_host_serving_metrics_and_verify",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_VAR, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
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

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The soft and hard `Max open files` of the host, as the kernel says.
    fn descriptor_limit(&self) -> (u64, u64) {
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", self.pid())).unwrap();
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .unwrap();
        let mut numbers = line.split_whitespace().filter_map(|w| w.parse().ok());
        (numbers.next().unwrap(), numbers.next().unwrap())
    }

    fn open_descriptors(&self) -> usize {
        open_descriptors(self.pid())
    }

    fn rss_kib(&self) -> u64 {
        rss_kib(self.pid())
    }

    /// `GET /metrics`: the time it took and `gym_verify_completed_total`.
    fn scrape(&self) -> (Duration, u64) {
        let started = Instant::now();
        let (status, body) = request(
            self.metrics,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .unwrap_or_else(|e| panic!("GET /metrics: {e}\n{}", self.log()));
        let took = started.elapsed();
        assert_eq!(status, 200, "GET /metrics");
        let families = parse(&body);
        let completed = families["gym_verify_completed_total"]
            .samples
            .values()
            .next()
            .map(|v| *v as u64)
            .unwrap();
        (took, completed)
    }

    /// The host's own `POST /verify`: the time it took.
    fn verify(&self) -> Duration {
        let started = Instant::now();
        let (status, body) = request(
            self.service,
            "POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
        )
        .unwrap_or_else(|e| panic!("POST /verify: {e}\n{}", self.log()));
        assert_eq!((status, body.as_str()), (200, "verified\n"), "POST /verify");
        started.elapsed()
    }

    fn stats(&self) -> BTreeMap<String, u64> {
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
    fn stats_once(
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
    fn assert_each_cause_logged_once_at_most(&self) {
        let log = self.log();
        for line in RATE_LIMITED_LINES {
            let count = log.matches(line).count();
            assert!(count <= 1, "{line:?} logged {count} times:\n{log}");
        }
    }
}

/// The most descriptors and resident memory a process held while sampled.
struct Peak {
    stop: Arc<std::sync::atomic::AtomicBool>,
    sampler: std::thread::JoinHandle<(usize, u64)>,
}

impl Peak {
    /// Samples `host` every millisecond until [`Peak::stop`].
    fn sample(host: &Host) -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pid = host.pid();
        let sampler = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let (mut fds, mut rss) = (0, 0);
                let started = Instant::now();
                while !stop.load(std::sync::atomic::Ordering::Relaxed)
                    && started.elapsed() < CHILD_HARD_LIMIT
                {
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
    fn stop(self) -> (usize, u64) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
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

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `raw`, reads the whole answer: status and body (as text).
fn request(addr: SocketAddr, raw: &str) -> std::io::Result<(u16, String)> {
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
fn closed_by_server(stream: &mut TcpStream) -> bool {
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

/// Scrapes and verifies [`PROBES`] times, each answered within [`ANSWER_BOUND`];
/// every verification shows in the scrape after it. The slowest answer.
fn probe(host: &Host, completed_before: u64) -> Duration {
    let mut slowest = Duration::ZERO;
    for i in 0..PROBES as u64 {
        let verified = host.verify();
        let (scraped, completed) = host.scrape();
        eprintln!("limits: POST /verify {verified:?}, GET /metrics {scraped:?}");
        assert!(verified < ANSWER_BOUND, "POST /verify took {verified:?}");
        assert!(scraped < ANSWER_BOUND, "GET /metrics took {scraped:?}");
        assert_eq!(
            completed,
            completed_before + i + 1,
            "a verification was lost"
        );
        slowest = slowest.max(verified).max(scraped);
    }
    slowest
}

#[test]
fn seventy_idle_connections_under_a_64_descriptor_limit_block_neither_metrics_nor_verify() {
    let host = Host::start();
    assert_eq!(
        host.descriptor_limit(),
        (DESCRIPTOR_LIMIT, DESCRIPTOR_LIMIT)
    );
    let (_, completed) = host.scrape();
    assert_eq!(host.stats()["max_connections"], EXPECTED_CAP);
    let fds_before = host.open_descriptors();
    let rss_before = host.rss_kib();

    // The attack: half send nothing, half a head that never ends.
    let peak = Peak::sample(&host);
    let attack_started = Instant::now();
    let mut idle: Vec<TcpStream> = (0..IDLE_CONNECTIONS)
        .map(|i| {
            let mut s = TcpStream::connect_timeout(&host.metrics, Duration::from_secs(5)).unwrap();
            if i % 2 == 0 {
                s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    .unwrap();
            }
            s
        })
        .collect();
    // The kernel queues connections in order: the probes' come after all 70.
    let slowest = probe(&host, completed);
    let stats = host.stats();
    let (fds_peak, rss_peak) = peak.stop();
    eprintln!(
        "limits: {IDLE_CONNECTIONS} idle connections: slowest answer {slowest:?}; \
         descriptors {fds_before} -> peak {fds_peak}; rss {rss_before} -> peak {rss_peak} KiB; {stats:?}"
    );
    assert!(
        stats["open_connections"] <= EXPECTED_CAP,
        "over the cap: {stats:?}"
    );
    // The cap, the one socket accepted before an eviction, and the host's
    // own connection of the moment.
    assert!(
        fds_peak as u64 <= fds_before as u64 + EXPECTED_CAP + 2,
        "descriptors {fds_before} -> peak {fds_peak}"
    );
    assert!(
        rss_peak.saturating_sub(rss_before) < RSS_GROWTH_BOUND_KIB,
        "rss {rss_before} -> peak {rss_peak} KiB"
    );
    assert_eq!(stats["accept_errors"], 0, "out of descriptors? {stats:?}");
    assert!(
        stats["evicted"] >= IDLE_CONNECTIONS as u64 - EXPECTED_CAP,
        "{stats:?}"
    );
    assert_eq!(stats["refused"], 0, "nobody was busy: {stats:?}");

    // Those not evicted are closed by the idle timeout.
    let mut still_open = IDLE_CONNECTIONS;
    while attack_started.elapsed() < TIMEOUT_AND_SLACK {
        still_open = idle.iter_mut().map(closed_by_server).filter(|c| !c).count();
        if still_open == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(still_open, 0, "idle connections the server never closed");
    eprintln!(
        "limits: every idle connection closed by the server {:?} after the attack began",
        attack_started.elapsed()
    );
    let stats = host.stats();
    assert!(stats["idle_timeouts"] >= 1, "{stats:?}");
    assert_eq!(
        stats["evicted"] + stats["idle_timeouts"],
        IDLE_CONNECTIONS as u64,
        "every attacker closed by eviction or the idle timeout: {stats:?}"
    );
    host.assert_each_cause_logged_once_at_most();
    assert!(
        !host.log().contains("no TLS and no authentication"),
        "a loopback endpoint warned of exposure"
    );
}

/// A client that pipelines GETs and never reads an answer.
fn never_reader(addr: SocketAddr) -> std::thread::JoinHandle<(TcpStream, usize)> {
    std::thread::spawn(move || {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
        let batch = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(100);
        let mut sent = 0;
        // Until the server stops reading (its answers fill both buffers).
        while sent < MOST_PIPELINED && s.write_all(&batch).is_ok() {
            sent += 100;
        }
        (s, sent)
    })
}

#[test]
fn never_reading_pipelining_clients_are_cut_off_and_block_neither_metrics_nor_verify() {
    let host = Host::start();
    assert_eq!(
        host.descriptor_limit(),
        (DESCRIPTOR_LIMIT, DESCRIPTOR_LIMIT)
    );
    let (_, completed) = host.scrape();
    let fds_before = host.open_descriptors();
    let rss_before = host.rss_kib();

    let peak = Peak::sample(&host);
    let readers: Vec<_> = (0..NEVER_READERS)
        .map(|_| never_reader(host.metrics))
        .collect();
    // Accepted by the endpoint, and then blocked: it stopped reading their
    // GETs because it could not write their answers.
    let stats = host.stats_once(Duration::from_secs(5), |s| {
        s["open_connections"] == NEVER_READERS as u64
    });
    assert_eq!(stats["open_connections"], NEVER_READERS as u64, "{stats:?}");
    let mut readers: Vec<(TcpStream, usize)> =
        readers.into_iter().map(|r| r.join().unwrap()).collect();
    let stalled_at = Instant::now();
    for (_, sent) in &readers {
        assert!(
            *sent < MOST_PIPELINED,
            "the endpoint read {sent} GETs without answering"
        );
    }
    let stats = host.stats();
    assert_eq!(stats["write_timeouts"], 0, "{stats:?}");

    let slowest = probe(&host, completed);
    let (fds_peak, rss_peak) = peak.stop();
    eprintln!(
        "limits: {NEVER_READERS} never-reading clients ({:?} GETs sent): slowest answer {slowest:?}; \
         descriptors {fds_before} -> peak {fds_peak}; rss {rss_before} -> peak {rss_peak} KiB",
        readers.iter().map(|(_, n)| *n).collect::<Vec<_>>()
    );
    assert!(
        fds_peak <= fds_before + NEVER_READERS + 2,
        "descriptors {fds_before} -> peak {fds_peak}"
    );
    assert!(
        rss_peak.saturating_sub(rss_before) < RSS_GROWTH_BOUND_KIB,
        "rss {rss_before} -> peak {rss_peak} KiB"
    );

    // Cut off by the write timeout: counted, and their sockets end (after
    // what the kernel had buffered) instead of waiting for more.
    let stats = host.stats_once(TIMEOUT_AND_SLACK, |s| {
        s["write_timeouts"] >= NEVER_READERS as u64
    });
    assert_eq!(
        stats["write_timeouts"],
        NEVER_READERS as u64,
        "after {:?}: {stats:?}",
        stalled_at.elapsed()
    );
    eprintln!(
        "limits: never-reading clients cut off within {:?} of their writes blocking",
        stalled_at.elapsed()
    );
    for (s, _) in &mut readers {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut sink = Vec::new();
        match s.read_to_end(&mut sink) {
            Ok(_) => {}
            Err(e) => assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "a never-reading client is still connected after {:?}",
                stalled_at.elapsed()
            ),
        }
    }
    assert_eq!(stats["accept_errors"], 0, "{stats:?}");
    host.assert_each_cause_logged_once_at_most();
}
