//! One real resources server (`gym-fleet server`, as the fleet launches it)
//! for the attack tests: its addresses, its memory and file descriptors read
//! from `/proc`, its standard error counted, raw loopback connections to it,
//! and its final report. Killed by its PID when dropped.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How much of the server's standard error is kept as text (all of it is counted).
const STDERR_KEPT: usize = 64 * 1024;

/// A running `gym-fleet server`.
pub struct ResourcesServer {
    child: Child,
    /// Where `POST /verify` is served.
    pub verify: SocketAddr,
    /// Where `/metrics` is served (prom builds only).
    pub metrics: Option<SocketAddr>,
    stdout: Receiver<Value>,
    stderr_bytes: Arc<AtomicUsize>,
    stderr_text: Arc<Mutex<String>>,
}

impl ResourcesServer {
    /// Starts a server with fast verifications (0..2 ms, all passing).
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts one with `extra` flags (later flags do not override: give
    /// only ones [`ResourcesServer::start`] does not set, or `--verify-ms`).
    pub fn start_with(extra: &[&str]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gym-fleet"));
        command.args(["server"]).args(extra);
        Self::spawn(command)
    }

    /// Starts one under `prlimit --nofile=LIMIT:LIMIT`: at most `limit` open
    /// file descriptors (`prlimit` is util-linux's).
    pub fn start_with_fd_limit(limit: u32) -> Self {
        let mut command = Command::new("prlimit");
        command
            .arg(format!("--nofile={limit}:{limit}"))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_gym-fleet"))
            .arg("server");
        // prlimit execs the server: the PID stays the server's.
        Self::spawn(command)
    }

    fn spawn(mut command: Command) -> Self {
        let given = command.get_args().any(|a| a == "--verify-ms");
        if !given {
            command.args(["--verify-ms", "0..2"]);
        }
        let mut child = command
            .args(["--name", "resources-t", "--metrics-port", "0"])
            .args(["--seed", "1", "--pass-ratio", "1", "--error-ratio", "0"])
            .args(["--linger", "0"])
            .env("OTEL_METRICS_EXPORTER", "none")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("gym-fleet server starts");
        let (tx, stdout) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(event);
                }
            }
        });
        let stderr_bytes = Arc::new(AtomicUsize::new(0));
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().expect("piped stderr");
        let (bytes, text) = (Arc::clone(&stderr_bytes), Arc::clone(&stderr_text));
        std::thread::spawn(move || {
            let mut err = err;
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                bytes.fetch_add(n, Ordering::Relaxed);
                let mut text = text.lock().unwrap();
                if text.len() < STDERR_KEPT {
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        });
        let ready = stdout
            .recv_timeout(Duration::from_secs(20))
            .expect("a ready line within 20 s");
        assert_eq!(ready["event"], "ready", "{ready}");
        let addr = |key: &str| ready[key].as_str().map(|a| a.parse().expect("an address"));
        Self {
            verify: addr("verify_addr").expect("a verify address"),
            metrics: addr("metrics_addr"),
            child,
            stdout,
            stderr_bytes,
            stderr_text,
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`: peak RSS).
    pub fn status_kib(&self, field: &str) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/{}/status", self.pid()))
    }

    /// How many file descriptors it holds open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// CPU time it has used (user + system), from `/proc/PID/stat`.
    pub fn cpu_time(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        // Fields after the parenthesised name; utime and stime are the 14th and 15th.
        let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let fields: Vec<u64> = after_name
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        let ticks = fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0);
        Duration::from_millis(ticks * 10) // USER_HZ is 100 on Linux
    }

    /// Bytes written to its standard error so far.
    pub fn stderr_bytes(&self) -> usize {
        self.stderr_bytes.load(Ordering::Relaxed)
    }

    /// The start of its standard error, as text.
    pub fn stderr_text(&self) -> String {
        self.stderr_text.lock().unwrap().clone()
    }

    /// `GET /metrics` (prom builds).
    pub fn scrape(&self) -> Option<String> {
        let metrics = self.metrics?;
        let (status, _, body) =
            gym_testkit::http_get(&format!("http://{metrics}/metrics"), &[]).expect("scraped");
        assert_eq!(status, 200);
        Some(String::from_utf8_lossy(&body).into_owned())
    }

    /// One valid `POST /verify` on a fresh connection; its status and body.
    pub fn verify_once(&self, task_id: u64) -> Result<(u16, Value), String> {
        let body = format!(r#"{{"task_id": {task_id}, "answer": "42"}}"#);
        let (status, _, answer) = gym_testkit::http_post(
            &format!("http://{}/verify", self.verify),
            &[("content-type", "application/json")],
            body.as_bytes(),
        )?;
        let answer = serde_json::from_slice(&answer).map_err(|e| format!("not JSON: {e}"))?;
        Ok((status, answer))
    }

    /// A raw connection to `/verify`'s port, reads bounded by `read_timeout`.
    pub fn connect(&self, read_timeout: Duration) -> TcpStream {
        let s = TcpStream::connect_timeout(&self.verify, Duration::from_secs(5))
            .expect("connects on loopback");
        s.set_read_timeout(Some(read_timeout)).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// Asks it to stop (closes its standard input, as the orchestrator does)
    /// and returns its final report.
    pub fn stop(mut self) -> Value {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.stdout.recv_timeout(left) {
                Ok(event) if event["event"] == "final" => {
                    let status = self.child.wait().expect("exits");
                    assert!(status.success(), "{status}\n{}", self.stderr_text());
                    return event;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        panic!("no final report within 20 s:\n{}", self.stderr_text());
    }
}

impl Drop for ResourcesServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads what the server sent until it closes or `deadline`; the status
/// code of its answer, if one came, and whether it closed by then.
pub fn read_until_closed(s: &mut TcpStream, deadline: Instant) -> (Option<u16>, bool) {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break false;
        };
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                break false
            }
            Err(_) => break true, // reset: closed by the server
        }
    };
    (status_of(&raw), closed)
}

/// A raw connection watched without blocking: what the server sent so far,
/// and whether it closed.
pub struct Watched {
    /// The connection (non-blocking).
    pub stream: TcpStream,
    received: Vec<u8>,
    closed: bool,
}

impl Watched {
    /// Watches `stream`.
    pub fn new(stream: TcpStream) -> Self {
        stream.set_nonblocking(true).expect("non-blocking");
        Self {
            stream,
            received: Vec::new(),
            closed: false,
        }
    }

    /// Reads whatever has arrived; true once the server closed (EOF or reset).
    pub fn poll(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        while !self.closed {
            match self.stream.read(&mut buf) {
                Ok(0) => self.closed = true,
                Ok(n) => self.received.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.closed = true,
            }
        }
        self.closed
    }

    /// The status code of the answer received, if any.
    pub fn status(&self) -> Option<u16> {
        status_of(&self.received)
    }
}

/// The status code of a raw HTTP/1.1 answer.
pub fn status_of(raw: &[u8]) -> Option<u16> {
    std::str::from_utf8(&raw[..raw.len().min(16)])
        .ok()?
        .split(' ')
        .nth(1)?
        .parse()
        .ok()
}

/// Writes `bytes` to `s`, ignoring a server that closed early.
pub fn send(s: &mut TcpStream, bytes: &[u8]) {
    let _ = s.write_all(bytes);
}

/// The value of the series starting with `prefix` in a text exposition.
pub fn series(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}
