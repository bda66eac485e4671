//! The endpoint's limits under attack (RELIABILITY.md, "Endpoint limits"):
//! a host process started with a 64-descriptor limit serves `/metrics` from
//! the Prometheus backend and a `POST /verify` of its own, as a resources
//! server does. While 70 idle connections are held open on `/metrics`, a new
//! scrape and the host's own `/verify` must both be answered within 2 s, the
//! endpoint must stay within its cap, the attackers must be closed by the
//! server (eviction and the idle timeout, counted), and each cause must be
//! logged once at most. Pipelined requests are answered one at a time, and a
//! scraper that keeps its connection alive keeps it. (Clients that pin
//! connections while their answers are written: `pinned_slots.rs`.)
//!
//! The host is this test binary again (`child_host_serving_metrics_and_verify`,
//! `common/host.rs`), with `RLIMIT_NOFILE` set to 64 between fork and exec,
//! and killed by PID when the test ends.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::host::{
    child_main, closed_by_server, verify_completed, Host, Peak, DESCRIPTOR_LIMIT, EXPECTED_CAP,
};

/// The host: this binary's test of that name.
const CHILD: &str = "endpoint_limits::child_host_serving_metrics_and_verify";
/// Idle connections the attack holds open (more than the limit itself).
const IDLE_CONNECTIONS: usize = 70;
/// Scrapes and verifications sent during the attack.
const PROBES: usize = 5;
/// What "answered" means during an attack.
const ANSWER_BOUND: Duration = Duration::from_secs(2);
/// The endpoint's idle timeout (10 s), plus slack.
const TIMEOUT_AND_SLACK: Duration = Duration::from_secs(10 + 6);
/// Resident memory the host may gain during an attack (each connection's
/// buffers are capped at 64 KiB).
const RSS_GROWTH_BOUND_KIB: u64 = 32 * 1024;
/// An exposition about three times what the kernel's buffers between the
/// endpoint and a slow client hold on loopback: the endpoint's send buffer
/// (at most 4 MiB, `net.ipv4.tcp_wmem`) and the client's receive buffer,
/// fixed at [`SLOW_RECEIVE_BUFFER`].
const BIG_EXPOSITION_BYTES: usize = 12 << 20;
/// The slow client's receive buffer. Left to itself Linux grows it as the
/// client reads (up to `net.ipv4.tcp_rmem`'s 32 MiB here), and it swallowed
/// a whole 8 MiB answer after the first 1 MiB read.
const SLOW_RECEIVE_BUFFER: usize = 64 * 1024;
/// How a slow reader reads: this much, this often, 0.25 MiB/s: an 8 MiB
/// answer would take 32 s. (16 KiB at a time would not make the endpoint
/// write again: Linux wakes a writer once a third of its socket's buffer
/// is free, and the 10 s would pass as for a client that reads nothing.)
const SLOW_READ_BYTES: usize = 1 << 20;
const SLOW_READ_EVERY: Duration = Duration::from_secs(4);
/// The endpoint's response deadline.
const RESPONSE_DEADLINE: Duration = Duration::from_secs(10);

/// Runs in the child only (a no-op in the parent's run).
#[test]
fn child_host_serving_metrics_and_verify() {
    child_main();
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
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let host = Host::start(CHILD, None);
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

/// One answer read off `stream` by its `Content-Length` (bytes past it stay
/// in `buffered`): its status, head (lower-cased) and body; `None` at the end.
fn read_answer(stream: &mut TcpStream, buffered: &mut Vec<u8>) -> Option<(u16, String, Vec<u8>)> {
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(end) = buffered.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buffered.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffered[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffered.len() < head_end + 4 + length {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buffered.extend_from_slice(&chunk[..n]);
    }
    let body = buffered[head_end + 4..head_end + 4 + length].to_vec();
    buffered.drain(..head_end + 4 + length);
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, head, body))
}

#[test]
fn pipelined_requests_are_answered_one_at_a_time_and_a_kept_alive_connection_is_kept() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let host = Host::start(CHILD, None);
    const GET: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

    // A scraper that keeps its connection between scrapes, as Prometheus
    // does: each answer read before the next request, none closes it.
    let mut kept = TcpStream::connect(host.metrics).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buffered = Vec::new();
    for i in 0..3 {
        kept.write_all(GET).unwrap();
        let (status, head, body) = read_answer(&mut kept, &mut buffered)
            .unwrap_or_else(|| panic!("scrape {i} on the kept connection got no answer"));
        assert_eq!(status, 200, "{head}");
        assert!(!head.contains("connection: close"), "scrape {i}: {head}");
        verify_completed(&String::from_utf8(body).unwrap());
    }
    assert!(
        !closed_by_server(&mut kept),
        "the kept connection was closed"
    );
    assert_eq!(host.stats()["pipelining_closes"], 0);

    // Three GETs in one write: the first is answered as any, the second,
    // sent before the first answer was out, with `Connection: close`, and
    // the third is never read.
    let mut pipelined = TcpStream::connect(host.metrics).unwrap();
    pipelined
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    pipelined.write_all(&GET.repeat(3)).unwrap();
    let mut buffered = Vec::new();
    let (status, head, _) = read_answer(&mut pipelined, &mut buffered).expect("a first answer");
    assert_eq!(status, 200);
    assert!(!head.contains("connection: close"), "{head}");
    let (status, head, _) = read_answer(&mut pipelined, &mut buffered).expect("a second answer");
    assert_eq!(status, 200);
    assert!(head.contains("connection: close"), "{head}");
    assert!(
        read_answer(&mut pipelined, &mut buffered).is_none(),
        "a third answer on a connection that pipelined"
    );
    let stats = host.stats();
    assert_eq!(stats["pipelining_closes"], 1, "{stats:?}");
    assert_eq!(stats["write_timeouts"], 0, "{stats:?}");
}

#[test]
fn an_answer_read_1_mib_every_4_s_is_cut_off_10_s_after_its_request() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let host = Host::start_padded(CHILD, None, BIG_EXPOSITION_BYTES);
    let scrape = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    // Read at once, the whole answer comes.
    let (status, body) = crate::common::host::request(host.metrics, scrape).unwrap();
    assert_eq!(status, 200);
    let whole = body.len();
    assert!(whole >= BIG_EXPOSITION_BYTES, "{whole} bytes");

    // Read 1 MiB every 4 s: each read lets the endpoint write more, and
    // none restarts the 10 s it has to write the whole answer (the old
    // write timeout, 10 s without a byte written, restarted at each).
    let mut slow = TcpStream::connect(host.metrics).unwrap();
    socket2::SockRef::from(&slow)
        .set_recv_buffer_size(SLOW_RECEIVE_BUFFER)
        .unwrap();
    slow.write_all(scrape.as_bytes()).unwrap();
    let asked = Instant::now();
    let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let cut = std::sync::Arc::clone(&cut);
        std::thread::spawn(move || {
            slow.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            let mut buf = vec![0u8; SLOW_READ_BYTES];
            let mut slow_reads = Vec::new();
            let mut total = 0;
            while !cut.load(std::sync::atomic::Ordering::Relaxed) {
                if asked.elapsed() < SLOW_READ_EVERY * (slow_reads.len() as u32 + 1) {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                let mut got = 0;
                while got < SLOW_READ_BYTES {
                    match slow.read(&mut buf[got..]) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got += n,
                    }
                }
                total += got;
                slow_reads.push((asked.elapsed(), got));
            }
            // Then all that is left: what the kernel still held, then the end.
            slow.set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut rest = Vec::new();
            let ended = slow.read_to_end(&mut rest);
            (slow_reads, total + rest.len(), ended.map(|_| ()))
        })
    };
    let stats = host.stats_once(RESPONSE_DEADLINE + Duration::from_secs(6), |s| {
        s["write_timeouts"] >= 1
    });
    let cut_after = asked.elapsed();
    cut.store(true, std::sync::atomic::Ordering::Relaxed);
    let (slow_reads, received, ended) = reader.join().unwrap();
    eprintln!(
        "limits: a {whole}-byte answer read 1 MiB every 4 s: cut after {cut_after:?} (reads {slow_reads:?}); \
         {received} bytes reached the client; {stats:?}"
    );
    assert_eq!(stats["write_timeouts"], 1, "never cut off: {stats:?}");
    assert!(
        cut_after >= RESPONSE_DEADLINE - Duration::from_millis(200),
        "cut off after {cut_after:?}, before the deadline"
    );
    assert!(
        slow_reads
            .first()
            .is_some_and(|&(_, got)| got == SLOW_READ_BYTES),
        "the client read nothing before the cut: {slow_reads:?}"
    );
    assert!(ended.is_ok(), "no end after the cut: {ended:?}");
    assert!(
        received < whole,
        "the whole answer went out: {received} bytes"
    );
    assert_eq!(host.stats()["open_connections"], 0);
    host.assert_each_cause_logged_once_at_most();
}
