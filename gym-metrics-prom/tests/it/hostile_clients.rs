//! The scrape endpoint under hostile clients (RELIABILITY.md, case 1).
//!
//! 512 connections that never finish their headers are held open while 8
//! threads send 11,000 mixed requests: valid scrapes among malformed request
//! lines, oversized headers, unknown methods and paths, bodies on GET,
//! half-closed and reset connections. Meanwhile a writer keeps recording.
//! Every valid scrape must succeed, quickly, with a count never older than
//! one already seen; the slow connections must be closed by the server's
//! header-read timeout (hyper's 30 s); memory must stay bounded; and the final
//! scrape must hold exactly what was recorded. (Global install: its own binary.)

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::exposition::parse;
use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;

/// Connections that never finish their headers.
const SLOW_CLIENTS: usize = 512;
/// Mixed requests, spread over [`CLIENT_THREADS`].
const REQUESTS: usize = 11_000;
const CLIENT_THREADS: usize = 8;
/// hyper's header-read timeout with a timer installed, plus slack.
const HEADER_TIMEOUT_AND_SLACK: Duration = Duration::from_secs(30 + 8);
/// The whole test stops by itself after this, whatever happens.
const HARD_LIMIT: Duration = Duration::from_secs(120);
/// The bound a valid scrape must meet (debug build, loaded 2-core machine).
const SCRAPE_LATENCY_BOUND: Duration = Duration::from_secs(3);
/// Resident memory may grow by at most this while under attack.
const RSS_GROWTH_BOUND_KIB: u64 = 128 * 1024;

/// The kinds of request, sent in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Scrape,
    ScrapeGzipOpenMetrics,
    /// Protobuf and gzip, asked for among junk media ranges.
    ScrapeGzipProtobuf,
    Head,
    MalformedLine,
    OversizedHeader,
    UnknownMethod,
    UnknownPath,
    BodyOnGet,
    HalfClosed,
    Reset,
}

const KINDS: [Kind; 11] = [
    Kind::Scrape,
    Kind::MalformedLine,
    Kind::OversizedHeader,
    Kind::UnknownMethod,
    Kind::UnknownPath,
    Kind::BodyOnGet,
    Kind::HalfClosed,
    Kind::Reset,
    Kind::Head,
    Kind::ScrapeGzipOpenMetrics,
    Kind::ScrapeGzipProtobuf,
];

/// What one client thread saw.
#[derive(Debug, Default)]
struct Seen {
    by_kind: Vec<(Kind, Outcome)>,
    scrape_latencies: Vec<Duration>,
    /// Valid scrapes whose completed count went backwards.
    went_backwards: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Status(u16),
    /// The server closed or reset without an answer.
    Closed,
    /// No answer within the client's read timeout: the server hung.
    Hung,
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads the answer to the end; the status line's code, or how it ended.
fn read_answer(mut s: TcpStream) -> (Outcome, Vec<u8>) {
    let mut raw = Vec::new();
    match s.read_to_end(&mut raw) {
        Ok(_) => {}
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            return (Outcome::Hung, raw)
        }
        Err(_) if raw.is_empty() => return (Outcome::Closed, raw),
        Err(_) => {}
    }
    let status = std::str::from_utf8(&raw[..raw.len().min(16)])
        .ok()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok());
    match status {
        Some(code) => (Outcome::Status(code), raw),
        None => (Outcome::Closed, raw),
    }
}

/// The `gym_verify_completed_total` value of a text exposition.
fn completed(body: &str) -> u64 {
    let families = parse(body);
    let family = &families["gym_verify_completed_total"];
    family
        .samples
        .values()
        .next()
        .map(|v| *v as u64)
        .expect("gym_verify_completed_total sample")
}

fn send(addr: SocketAddr, kind: Kind, seen: &mut Seen, last_completed: &mut u64) {
    let mut s = connect(addr);
    let request: Vec<u8> = match kind {
        Kind::Scrape => b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec(),
        Kind::ScrapeGzipOpenMetrics => b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n".to_vec(),
        Kind::ScrapeGzipProtobuf => {
            let mut r = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: ;;,=;q=,*/*;q=-1,text/plain;q=NaN,".to_vec();
            for i in 0..500 {
                r.extend_from_slice(format!("application/x-{i};proto=;encoding=;q=0.{i},").as_bytes());
            }
            r.extend_from_slice(b"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.99\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n");
            r
        }
        Kind::Head => b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec(),
        Kind::MalformedLine => b"GET\x00 /me trics HTTP/9.9 junk\r\n\xff\xfe: \r\n\r\n".to_vec(),
        Kind::OversizedHeader => {
            let mut r = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ".to_vec();
            r.extend(std::iter::repeat_n(b'a', 70 * 1024));
            r.extend_from_slice(b"\r\n\r\n");
            r
        }
        Kind::UnknownMethod => b"BREW /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec(),
        Kind::UnknownPath => b"GET /debug/pprof HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec(),
        Kind::BodyOnGet => b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello world".to_vec(),
        Kind::HalfClosed => b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        Kind::Reset => b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
    };
    let started = Instant::now();
    // The server may close early (oversized headers): a failed write is an answer too.
    let _ = s.write_all(&request);
    match kind {
        Kind::HalfClosed => {
            let _ = s.shutdown(Shutdown::Write);
        }
        Kind::Reset => {
            // std has no SO_LINGER 0, but Linux resets a connection closed with
            // unread data: wait for the answer to arrive, then drop it unread.
            let _ = s.peek(&mut [0u8; 1]);
            drop(s);
            seen.by_kind.push((kind, Outcome::Closed));
            return;
        }
        _ => {}
    }
    let (outcome, raw) = read_answer(s);
    seen.by_kind.push((kind, outcome));
    if kind == Kind::ScrapeGzipProtobuf && outcome == Outcome::Status(200) {
        let head = String::from_utf8_lossy(&raw[..raw.len().min(512)]).to_lowercase();
        assert!(
            head.contains("content-type: application/vnd.google.protobuf")
                && head.contains("content-encoding: gzip"),
            "{head}"
        );
    }
    if matches!(kind, Kind::Scrape | Kind::BodyOnGet) && outcome == Outcome::Status(200) {
        seen.scrape_latencies.push(started.elapsed());
        let text = String::from_utf8_lossy(&raw);
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        let now = completed(body);
        if now < *last_completed {
            seen.went_backwards += 1;
        }
        *last_completed = now;
    }
}

/// Expected outcome per kind: `true` if acceptable.
fn acceptable(kind: Kind, outcome: Outcome) -> bool {
    match kind {
        Kind::Scrape
        | Kind::ScrapeGzipOpenMetrics
        | Kind::ScrapeGzipProtobuf
        | Kind::Head
        | Kind::BodyOnGet => outcome == Outcome::Status(200),
        // A complete request, then the client's side shut: still answered.
        Kind::HalfClosed => outcome == Outcome::Status(200),
        Kind::MalformedLine => matches!(outcome, Outcome::Status(400) | Outcome::Closed),
        Kind::OversizedHeader => matches!(outcome, Outcome::Status(431) | Outcome::Closed),
        Kind::UnknownMethod => outcome == Outcome::Status(405),
        Kind::UnknownPath => outcome == Outcome::Status(404),
        Kind::Reset => outcome == Outcome::Closed,
    }
}

/// True when the server has closed `s` (EOF or reset), false if it is still open.
fn closed_by_server(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    for _ in 0..64 {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // e.g. a 408 before the close
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn hostile_clients_cannot_stop_valid_scrapes_nor_grow_memory() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let test_started = Instant::now();
    let guard = PrometheusBuilder::new()
        .role(Role::server("hostile-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    let addr = guard.local_addr();

    // Warm up (first scrape, runtime buffers) before the memory baseline.
    gym_metrics_api::record_verify_ms(1.0, true);
    for _ in 0..20 {
        send(addr, Kind::Scrape, &mut Seen::default(), &mut 0);
    }
    let rss_before = rss_kib();

    // A writer keeps recording while the endpoint is attacked.
    let stop = Arc::new(AtomicBool::new(false));
    let recorded = Arc::new(AtomicU64::new(1));
    let writer = {
        let (stop, recorded) = (Arc::clone(&stop), Arc::clone(&recorded));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) && test_started.elapsed() < HARD_LIMIT {
                gym_metrics_api::record_verify_ms((i % 5000) as f64, i % 3 != 0);
                recorded.fetch_add(1, Ordering::Relaxed);
                i += 1;
                if i % 64 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
    };

    // Slow clients: half send a partial header, half nothing at all.
    let slow_opened = Instant::now();
    let mut slow: Vec<TcpStream> = (0..SLOW_CLIENTS)
        .map(|i| {
            let mut s = connect(addr);
            if i % 2 == 0 {
                s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    .unwrap();
            }
            s
        })
        .collect();

    // Mixed requests.
    let clients: Vec<_> = (0..CLIENT_THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                let mut seen = Seen::default();
                let mut last = 0;
                for i in (t..REQUESTS).step_by(CLIENT_THREADS) {
                    if test_started.elapsed() > HARD_LIMIT {
                        break;
                    }
                    send(addr, KINDS[i % KINDS.len()], &mut seen, &mut last);
                }
                seen
            })
        })
        .collect();
    let mut rss_peak = rss_kib();
    while clients.iter().any(|c| !c.is_finished()) {
        rss_peak = rss_peak.max(rss_kib());
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen: Vec<Seen> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let mixed_done = slow_opened.elapsed();

    // Tally the outcomes.
    let mut sent = 0usize;
    let mut bad = Vec::new();
    let mut latencies = Vec::new();
    let mut backwards = 0;
    for s in &seen {
        sent += s.by_kind.len();
        bad.extend(
            s.by_kind
                .iter()
                .filter(|(k, o)| !acceptable(*k, *o))
                .copied(),
        );
        latencies.extend_from_slice(&s.scrape_latencies);
        backwards += s.went_backwards;
    }
    let mut tally: std::collections::BTreeMap<String, u64> = Default::default();
    for s in &seen {
        for (k, o) in &s.by_kind {
            *tally.entry(format!("{k:?} -> {o:?}")).or_default() += 1;
        }
    }
    eprintln!("hostile: outcomes {tally:?}");
    latencies.sort();
    let p = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    eprintln!(
        "hostile: {sent} requests in {mixed_done:?} with {SLOW_CLIENTS} slow clients open; \
         {} valid scrapes, latency p50 {:?} p99 {:?} max {:?}; rss {} KiB -> peak {} KiB",
        latencies.len(),
        p(0.5),
        p(0.99),
        p(1.0),
        rss_before,
        rss_peak
    );
    assert_eq!(sent, REQUESTS, "every request was sent");
    assert!(
        bad.is_empty(),
        "{} unacceptable outcomes, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
    assert_eq!(
        latencies.len(),
        REQUESTS / KINDS.len() * 2,
        "every valid scrape got 200"
    );
    assert!(p(1.0) < SCRAPE_LATENCY_BOUND, "slowest scrape {:?}", p(1.0));
    assert_eq!(
        backwards, 0,
        "a scrape showed fewer verifications than an earlier one"
    );

    // The slow clients: still open now (if the mixed run was quick), closed after the timeout.
    while slow_opened.elapsed() < HEADER_TIMEOUT_AND_SLACK {
        rss_peak = rss_peak.max(rss_kib());
        std::thread::sleep(Duration::from_millis(250));
    }
    let still_open = slow.iter_mut().map(closed_by_server).filter(|c| !c).count();
    assert_eq!(still_open, 0, "slow clients the server never timed out");
    drop(slow);

    // Nothing lost: the final scrape holds exactly what was recorded.
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let mut last = 0;
    let mut final_seen = Seen::default();
    send(addr, Kind::Scrape, &mut final_seen, &mut last);
    assert_eq!(last, recorded.load(Ordering::Relaxed), "final count");

    let rss_after = rss_kib();
    eprintln!("hostile: rss after {rss_after} KiB, peak {rss_peak} KiB, recorded {last}");
    assert!(
        rss_peak.saturating_sub(rss_before) < RSS_GROWTH_BOUND_KIB,
        "memory grew from {rss_before} KiB to {rss_peak} KiB"
    );
    guard.shutdown().expect("the endpoint stops cleanly");
}
