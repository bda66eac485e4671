//! Clients that pin the endpoint's connections while their answers are
//! written (issue 26, finding 1; RELIABILITY.md, "The new doors"). The host
//! (`common/host.rs`: this binary again, under a 64-descriptor limit, so the
//! endpoint's cap is 12, with a resources server's 8 KiB exposition) is
//! attacked by cap + 2 clients that each reconnect as soon as the endpoint
//! closes them:
//!
//! - pipelining batches of GETs and never reading, or reading 16 KiB every
//!   8 s (before the fix: 0 of 40 scrapes answered, every one refused);
//! - sending one GET at a time and never reading, which no pipelining bound
//!   closes: they hold every slot, all the time;
//! - over TLS with basic auth and no password, pipelining GETs whose 401s
//!   they never read, or read 16 KiB every 8 s.
//!
//! Meanwhile a scraper (with the password, over TLS) scrapes every 0.5 s for
//! 20 s on a new connection each time: every scrape must be answered, 200,
//! within 2 s. The attacks run one at a time (each on a host of its own).
#![cfg(target_os = "linux")]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::host::{child_main, request, verify_completed, Host, Peak, EXPECTED_CAP};

/// The host: this binary's test of that name.
const CHILD: &str = "pinned_slots::child_host_serving_metrics_and_verify";
/// What the host's own registry adds to each exposition, so that it is a
/// resources server's, about 8 KiB (BENCHMARKS.md, "Fleet scale"): the
/// answers' size decides how soon a client that does not read has filled
/// the kernel's buffers (about 4 MB on loopback) and waits.
const PADDING_BYTES: usize = 7 * 1024;
/// Attackers: two more than the endpoint's cap.
const ATTACKERS: usize = EXPECTED_CAP as usize + 2;
/// Pipelined GETs per write.
const BATCH: usize = 100;
/// How a slow reader reads: this much, this often.
const SLOW_READ_BYTES: usize = 16 * 1024;
const SLOW_READ_EVERY: Duration = Duration::from_secs(8);
/// A one-at-a-time client's pause between two GETs: long enough for the
/// endpoint to answer one before the next comes (so none is pipelined)
/// with all of them at it.
const ONE_AT_A_TIME_GAP: Duration = Duration::from_millis(5);
/// The attackers' head start, so that they hold the slots when scraping begins.
const HEAD_START: Duration = Duration::from_secs(2);
/// The scraper: every 0.5 s for 20 s.
const SCRAPE_EVERY: Duration = Duration::from_millis(500);
const SCRAPING_FOR: Duration = Duration::from_secs(20);
/// What "answered" means under attack.
const ANSWER_BOUND: Duration = Duration::from_secs(2);
/// Resident memory the host may gain during an attack.
const RSS_GROWTH_BOUND_KIB: u64 = 32 * 1024;

/// Runs in the child only (a no-op in the parent's run).
#[test]
fn child_host_serving_metrics_and_verify() {
    child_main();
}

// ---- the attackers ----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attack {
    /// Batches of [`BATCH`] pipelined GETs, as fast as the endpoint takes them.
    Pipeline(Reads),
    /// One GET every [`ONE_AT_A_TIME_GAP`], never reading.
    OneAtATime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    Never,
    /// [`SLOW_READ_BYTES`] every [`SLOW_READ_EVERY`].
    Slowly,
}

/// How a client reaches `/metrics`.
#[derive(Clone)]
enum Transport {
    Plain,
    #[cfg(feature = "web-config")]
    Tls(Arc<rustls::ClientConfig>),
}

/// An attacker's connection: the socket, and over TLS the session that
/// encrypts what it sends (what it receives it never decrypts).
struct Conn {
    socket: TcpStream,
    #[cfg(feature = "web-config")]
    tls: Option<rustls::ClientConnection>,
}

impl Conn {
    fn open(addr: SocketAddr, transport: &Transport) -> std::io::Result<Self> {
        let socket = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        socket.set_read_timeout(Some(Duration::from_secs(5)))?;
        match transport {
            Transport::Plain => {}
            #[cfg(feature = "web-config")]
            Transport::Tls(config) => {
                let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
                let mut tls = rustls::ClientConnection::new(Arc::clone(config), name)
                    .map_err(std::io::Error::other)?;
                let mut io = &socket;
                while tls.is_handshaking() {
                    tls.complete_io(&mut io)?;
                }
                socket.set_write_timeout(Some(Duration::from_millis(200)))?;
                socket.set_read_timeout(Some(Duration::from_millis(100)))?;
                return Ok(Self {
                    socket,
                    tls: Some(tls),
                });
            }
        }
        socket.set_write_timeout(Some(Duration::from_millis(200)))?;
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        Ok(Self {
            socket,
            #[cfg(feature = "web-config")]
            tls: None,
        })
    }

    /// `plain` as it goes on the wire.
    fn wire<'a>(&mut self, plain: &'a [u8]) -> std::io::Result<Cow<'a, [u8]>> {
        #[cfg(feature = "web-config")]
        if let Some(tls) = &mut self.tls {
            tls.writer().write_all(plain)?;
            let mut out = Vec::new();
            while tls.wants_write() {
                tls.write_tls(&mut out)?;
            }
            return Ok(Cow::Owned(out));
        }
        Ok(Cow::Borrowed(plain))
    }
}

/// What one attacker did.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    connections: u64,
    requests: u64,
    bytes_read: u64,
}

/// One attacker: connects, attacks until the endpoint closes it (a write or
/// read fails), reconnects at once, until `stop`.
fn attacker(
    addr: SocketAddr,
    transport: Transport,
    attack: Attack,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Tally> {
    std::thread::spawn(move || {
        const GET: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
        let batch = GET.repeat(BATCH);
        let mut tally = Tally::default();
        let mut buf = vec![0u8; SLOW_READ_BYTES];
        while !stop.load(Ordering::Relaxed) {
            let Ok(mut conn) = Conn::open(addr, &transport) else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            tally.connections += 1;
            let mut next_read = Instant::now() + SLOW_READ_EVERY;
            // What is still to send of the last batch (or GET), on the wire.
            let mut pending: Vec<u8> = Vec::new();
            let mut sent_at = Instant::now();
            'connection: while !stop.load(Ordering::Relaxed) {
                if attack == Attack::Pipeline(Reads::Slowly) && Instant::now() >= next_read {
                    next_read += SLOW_READ_EVERY;
                    let mut got = 0;
                    while got < SLOW_READ_BYTES {
                        match conn.socket.read(&mut buf[got..]) {
                            Ok(0) => break 'connection,
                            Ok(n) => got += n,
                            Err(e) if timed_out(&e) => break,
                            Err(_) => break 'connection,
                        }
                    }
                    tally.bytes_read += got as u64;
                }
                if pending.is_empty() {
                    let (plain, requests) = match attack {
                        Attack::Pipeline(_) => (&batch[..], BATCH),
                        Attack::OneAtATime => {
                            let due = sent_at + ONE_AT_A_TIME_GAP;
                            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                                std::thread::sleep(wait);
                            }
                            sent_at = Instant::now();
                            (GET, 1)
                        }
                    };
                    let Ok(wire) = conn.wire(plain) else {
                        break;
                    };
                    pending = wire.into_owned();
                    tally.requests += requests as u64;
                }
                match conn.socket.write(&pending) {
                    Ok(0) => break,
                    Ok(n) => {
                        pending.drain(..n);
                    }
                    // Its buffers are full: the endpoint reads no more for now.
                    Err(e) if timed_out(&e) => {}
                    // Closed by the endpoint.
                    Err(_) => break,
                }
            }
        }
        tally
    })
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

// ---- the scraper ----

/// How the scraper scrapes: plain, or over TLS with the password.
enum Scraper {
    Plain,
    #[cfg(feature = "web-config")]
    Tls {
        client: Arc<rustls::ClientConfig>,
        authorization: String,
    },
}

impl Scraper {
    /// One scrape on a new connection: `gym_verify_completed_total`, or why not.
    fn scrape(&self, addr: SocketAddr) -> Result<u64, String> {
        match self {
            Scraper::Plain => {
                let (status, body) = request(
                    addr,
                    "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                )
                .map_err(|e| e.to_string())?;
                ok_exposition(status, &body)
            }
            #[cfg(feature = "web-config")]
            Scraper::Tls {
                client,
                authorization,
            } => {
                let (status, _, body) = crate::common::pki::https_get(
                    addr,
                    client,
                    "/metrics",
                    &[("Authorization", authorization)],
                )
                .map_err(|e| e.to_string())?;
                ok_exposition(status, &String::from_utf8_lossy(&body))
            }
        }
    }
}

fn ok_exposition(status: u16, body: &str) -> Result<u64, String> {
    if status != 200 {
        return Err(format!("status {status}"));
    }
    std::panic::catch_unwind(|| verify_completed(body)).map_err(|_| "no exposition".to_string())
}

/// One scrape under attack: when it began (since scraping began), how long
/// it took, and its outcome.
#[derive(Debug)]
struct Scrape {
    at: Duration,
    took: Duration,
    outcome: Result<u64, String>,
}

/// What an attack came to.
struct Outcome {
    scrapes: Vec<Scrape>,
    tallies: Vec<Tally>,
    /// The endpoint's counts when scraping began, and when the attack ended.
    stats_at_start: BTreeMap<String, u64>,
    stats: BTreeMap<String, u64>,
    fds: (usize, usize),
    rss_kib: (u64, u64),
}

/// Runs `attack` with [`ATTACKERS`] clients against `host` while `scraper`
/// scrapes; asserts that every scrape was answered within [`ANSWER_BOUND`],
/// that the endpoint stayed within its cap, and its memory bounded.
fn run(host: &Host, transport: Transport, attack: Attack, scraper: &Scraper) -> Outcome {
    scraper
        .scrape(host.metrics)
        .expect("a scrape before the attack");
    let fds_before = host.open_descriptors();
    let rss_before = host.rss_kib();
    let peak = Peak::sample(host);
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<_> = (0..ATTACKERS)
        .map(|_| attacker(host.metrics, transport.clone(), attack, Arc::clone(&stop)))
        .collect();
    std::thread::sleep(HEAD_START);
    let stats_at_start = host.stats();

    let mut scrapes = Vec::new();
    let began = Instant::now();
    let mut next = began;
    while began.elapsed() < SCRAPING_FOR {
        let at = began.elapsed();
        let started = Instant::now();
        let outcome = scraper.scrape(host.metrics);
        scrapes.push(Scrape {
            at,
            took: started.elapsed(),
            outcome,
        });
        next += SCRAPE_EVERY;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let stats = host.stats();
    stop.store(true, Ordering::Relaxed);
    let tallies: Vec<Tally> = attackers.into_iter().map(|a| a.join().unwrap()).collect();
    let (fds_peak, rss_peak) = peak.stop();

    let outcome = Outcome {
        scrapes,
        tallies,
        stats_at_start,
        stats,
        fds: (fds_before, fds_peak),
        rss_kib: (rss_before, rss_peak),
    };
    outcome.report(attack, &transport);
    outcome.assert_held(host);
    outcome
}

impl Outcome {
    fn report(&self, attack: Attack, transport: &Transport) {
        let over = match transport {
            Transport::Plain => "http",
            #[cfg(feature = "web-config")]
            Transport::Tls(_) => "https, no password",
        };
        let answered = self
            .scrapes
            .iter()
            .filter(|s| s.outcome.is_ok() && s.took < ANSWER_BOUND)
            .count();
        let slowest = self
            .scrapes
            .iter()
            .map(|s| s.took)
            .max()
            .unwrap_or_default();
        let mut took: Vec<Duration> = self.scrapes.iter().map(|s| s.took).collect();
        took.sort();
        let median = took.get(took.len() / 2).copied().unwrap_or_default();
        let sum = |f: fn(&Tally) -> u64| self.tallies.iter().map(f).sum::<u64>();
        eprintln!(
            "pinned: {ATTACKERS} × {attack:?} ({over}): {answered} of {} scrapes answered within {ANSWER_BOUND:?}, \
             median {median:?}, slowest {slowest:?}; attackers made {} connections, sent {} requests, read {} bytes; \
             descriptors {} -> peak {}; rss {} -> peak {} KiB\n  at start {:?}\n  at end   {:?}",
            self.scrapes.len(),
            sum(|t| t.connections),
            sum(|t| t.requests),
            sum(|t| t.bytes_read),
            self.fds.0,
            self.fds.1,
            self.rss_kib.0,
            self.rss_kib.1,
            self.stats_at_start,
            self.stats,
        );
        for s in self
            .scrapes
            .iter()
            .filter(|s| s.outcome.is_err() || s.took >= ANSWER_BOUND)
        {
            eprintln!(
                "pinned:   scrape at {:?}: {:?} after {:?}",
                s.at, s.outcome, s.took
            );
        }
    }

    fn assert_held(&self, host: &Host) {
        let failed: Vec<&Scrape> = self
            .scrapes
            .iter()
            .filter(|s| s.outcome.is_err() || s.took >= ANSWER_BOUND)
            .collect();
        assert!(
            failed.is_empty(),
            "{} of {} scrapes not answered within {ANSWER_BOUND:?}: {failed:?}",
            failed.len(),
            self.scrapes.len()
        );
        // Scraped throughout: every 0.5 s for 20 s.
        assert!(
            self.scrapes.len() as u128 >= SCRAPING_FOR.as_millis() / SCRAPE_EVERY.as_millis() - 2,
            "only {} scrapes",
            self.scrapes.len()
        );
        // The cap, a socket accepted before its eviction closed, the host's
        // own connection of the moment.
        assert!(
            self.fds.1 as u64 <= self.fds.0 as u64 + EXPECTED_CAP + 2,
            "descriptors {} -> peak {}",
            self.fds.0,
            self.fds.1
        );
        assert!(
            self.rss_kib.1.saturating_sub(self.rss_kib.0) < RSS_GROWTH_BOUND_KIB,
            "rss {} -> peak {} KiB",
            self.rss_kib.0,
            self.rss_kib.1
        );
        assert_eq!(self.stats["accept_errors"], 0, "{:?}", self.stats);
        host.assert_each_cause_logged_once_at_most();
    }

    /// How much the endpoint counted of `what` during the attack.
    fn counted(&self, what: &str) -> u64 {
        self.stats[what]
    }

    fn connections(&self) -> u64 {
        self.tallies.iter().map(|t| t.connections).sum()
    }
}

// ---- the attacks ----

#[test]
fn pipelining_clients_that_never_read_lock_no_scraper_out() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let host = Host::start_padded(CHILD, None, PADDING_BYTES);
    let outcome = run(
        &host,
        Transport::Plain,
        Attack::Pipeline(Reads::Never),
        &Scraper::Plain,
    );
    // Each connection had two answers (the second closing it), not a
    // buffer's worth.
    assert!(outcome.counted("pipelining_closes") >= ATTACKERS as u64);
    assert!(outcome.connections() >= ATTACKERS as u64);
}

#[test]
fn pipelining_clients_that_read_16_kib_every_8_s_lock_no_scraper_out() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let host = Host::start_padded(CHILD, None, PADDING_BYTES);
    let outcome = run(
        &host,
        Transport::Plain,
        Attack::Pipeline(Reads::Slowly),
        &Scraper::Plain,
    );
    assert!(outcome.counted("pipelining_closes") >= ATTACKERS as u64);
}

#[test]
fn clients_holding_every_slot_one_get_at_a_time_lock_no_scraper_out() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let host = Host::start_padded(CHILD, None, PADDING_BYTES);
    let outcome = run(&host, Transport::Plain, Attack::OneAtATime, &Scraper::Plain);
    // They held the slots: the cap was full when the scraping began or when
    // it ended. One of the two moments may find it short: on a loaded
    // machine the attackers may not all have connected at the start, and a
    // GET sent behind an unread answer closes its connection, so at the end
    // some may be reconnecting.
    let open = |stats: &BTreeMap<String, u64>| stats["open_connections"];
    assert!(
        open(&outcome.stats_at_start).max(open(&outcome.stats)) >= EXPECTED_CAP - 1,
        "the attackers did not fill the cap: at start {:?}, at end {:?}",
        outcome.stats_at_start,
        outcome.stats
    );
    // Every scrape made room by evicting one of them.
    assert!(
        outcome.counted("evicted") >= outcome.scrapes.len() as u64,
        "{:?}",
        outcome.stats
    );
}

#[cfg(feature = "web-config")]
mod over_tls {
    use super::*;
    use crate::common::pki::{basic, client_config, hash, TestCa, TestDir};

    const USER: &str = "prometheus";
    const PASSWORD: &str = "correct horse battery staple";

    /// A host serving `/metrics` over TLS with basic auth, the scraper with
    /// the password, and the attackers' TLS (the same CA, no password).
    fn tls_host(dir: &TestDir) -> (Host, Scraper, Transport) {
        let ca = TestCa::new("gym test CA");
        let (cert, key) = ca.server_cert();
        dir.write("server.crt", &cert);
        dir.write("server.key", &key);
        let web = dir.write(
            "web.yml",
            &format!(
                "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  {USER}: '{}'\n",
                hash(PASSWORD)
            ),
        );
        let host = Host::start_padded(CHILD, Some(&web), PADDING_BYTES);
        let client = client_config(&ca.cert);
        let scraper = Scraper::Tls {
            client: Arc::clone(&client),
            authorization: basic(USER, PASSWORD),
        };
        (host, scraper, Transport::Tls(client))
    }

    #[test]
    fn tls_clients_pipelining_without_a_password_never_reading_their_401s_lock_no_scraper_out() {
        if gym_testkit::ran_alone_in_child() {
            return;
        }
        let dir = TestDir::new("pinned-tls-never");
        let (host, scraper, transport) = tls_host(&dir);
        let outcome = run(&host, transport, Attack::Pipeline(Reads::Never), &scraper);
        assert!(outcome.counted("auth_refusals") >= ATTACKERS as u64);
        assert!(outcome.counted("pipelining_closes") >= ATTACKERS as u64);
    }

    #[test]
    fn tls_clients_pipelining_without_a_password_reading_16_kib_every_8_s_lock_no_scraper_out() {
        if gym_testkit::ran_alone_in_child() {
            return;
        }
        let dir = TestDir::new("pinned-tls-slow");
        let (host, scraper, transport) = tls_host(&dir);
        let outcome = run(&host, transport, Attack::Pipeline(Reads::Slowly), &scraper);
        assert!(outcome.counted("auth_refusals") >= ATTACKERS as u64);
        assert!(outcome.counted("pipelining_closes") >= ATTACKERS as u64);
    }
}
