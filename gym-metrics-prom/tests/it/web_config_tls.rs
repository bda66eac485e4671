//! `/metrics` over TLS with basic auth, configured by an exporter-toolkit web
//! configuration file, against clients that get it wrong or attack it
//! (RELIABILITY.md, "/metrics over TLS with basic auth"). Certificates are
//! made by the test (rcgen), on loopback only. (Global install: its own binary.)

#![cfg(feature = "web-config")]

use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::pki::{basic, client_config, hash, https_get, TestCa, TestDir};
use crate::common::raw_http::exchange;
use gym_metrics_api::Role;
use gym_metrics_prom::{BuildError, PrometheusBuilder};

const USER: &str = "prometheus";
const PASSWORD: &str = "correct horse battery staple";
/// Wrong-password requests in the flood, over [`FLOOD_THREADS`].
const FLOOD_REQUESTS: usize = 320;
const FLOOD_THREADS: usize = 16;
/// The endpoint's idle timeout (10 s) plus slack for a loaded machine.
const IDLE_TIMEOUT_AND_SLACK: Duration = Duration::from_secs(10 + 8);

fn install_error(web: &std::path::Path) -> String {
    match PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .web_config_file(web)
        .install()
    {
        Err(e @ BuildError::WebConfig(_)) => e.to_string(),
        Err(e) => panic!("expected a web configuration error, got {e}"),
        Ok(_) => panic!("{} was accepted", web.display()),
    }
}

#[test]
fn tls_and_basic_auth_hold_against_wrong_and_hostile_clients() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let dir = TestDir::new("web-config-tls");
    let ca = TestCa::new("gym test CA");
    let (cert, key) = ca.server_cert();
    dir.write("server.crt", &cert);
    dir.write("server.key", &key);
    let users = format!("basic_auth_users:\n  {USER}: '{}'\n", hash(PASSWORD));
    let tls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";

    // Start-up errors name the key or file; a failed install installs nothing.
    let unknown = dir.write(
        "unknown.yml",
        &format!("{tls}  client_cert: x.crt\n{users}"),
    );
    let e = install_error(&unknown);
    assert!(
        e.contains("client_cert") && e.contains("unknown.yml"),
        "{e}"
    );
    let missing = dir.write(
        "missing.yml",
        "tls_server_config:\n  cert_file: nowhere.crt\n  key_file: server.key\n",
    );
    let e = install_error(&missing);
    assert!(
        e.contains("tls_server_config.cert_file") && e.contains("nowhere.crt"),
        "{e}"
    );
    let (_, other_key) = ca.server_cert();
    dir.write("other.key", &other_key);
    let mismatch = dir.write(
        "mismatch.yml",
        "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n",
    );
    let e = install_error(&mismatch);
    assert!(
        e.contains("tls_server_config.key_file") && e.contains("other.key"),
        "{e}"
    );
    let bad_hash = dir.write(
        "bad-hash.yml",
        &format!("{tls}basic_auth_users:\n  {USER}: {PASSWORD}\n"),
    );
    let e = install_error(&bad_hash);
    assert!(
        e.contains("basic_auth_users.prometheus") && !e.contains(PASSWORD),
        "{e}"
    );

    let web = dir.write("web.yml", &format!("{tls}{users}"));
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-verifier-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .web_config_file(&web)
        .install()
        .unwrap();
    let addr = guard.local_addr();
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    let client = client_config(&ca.cert);
    let right = basic(USER, PASSWORD);
    let scrape = || https_get(addr, &client, "/metrics", &[("Authorization", &right)]);

    let (status, _, body) = scrape().unwrap();
    let text = String::from_utf8(body).unwrap();
    assert_eq!(status, 200);
    assert!(text.contains("gym_verify_completed_total{"), "{text}");

    // Wrong or missing credentials: 401 with a challenge, no exposition byte.
    for authorization in [
        Some(basic(USER, "wrong")),
        Some(basic("mallory", PASSWORD)),
        Some("Bearer token".to_string()),
        None,
    ] {
        let headers: Vec<(&str, &str)> = authorization
            .iter()
            .map(|a| ("Authorization", a.as_str()))
            .collect();
        let (status, head, body) = https_get(addr, &client, "/metrics", &headers).unwrap();
        assert_eq!(status, 401, "{authorization:?}");
        assert!(
            head.contains("www-authenticate: basic realm=\"gym-metrics\""),
            "{head}"
        );
        let body = String::from_utf8_lossy(&body);
        assert!(
            !body.contains("gym_") && !body.contains("target_info"),
            "{body}"
        );
    }
    // Other paths are behind the same door.
    let (status, _, _) = https_get(addr, &client, "/", &[]).unwrap();
    assert_eq!(status, 401);

    // Plaintext HTTP to the TLS port: no answer, and the endpoint carries on.
    let before = guard.endpoint_stats().tls_handshake_failures;
    let plain = exchange(addr, "GET", "/metrics", &[("Authorization", &right)]);
    assert!(
        plain.as_ref().map_or(true, |r| r.status != 200),
        "plaintext was served"
    );
    assert!(plain.map_or(true, |r| !String::from_utf8_lossy(&r.body).contains("gym_")));
    // A client that trusts another CA does not get through the handshake.
    let stranger = client_config(&TestCa::new("another CA").cert);
    assert!(https_get(addr, &stranger, "/metrics", &[("Authorization", &right)]).is_err());
    assert_eq!(scrape().unwrap().0, 200);
    assert!(guard.endpoint_stats().tls_handshake_failures > before);

    // A client that opens a connection and never starts the handshake is
    // closed by the idle timeout: it holds no slot for ever.
    let idle_before = guard.endpoint_stats().idle_timeouts;
    let mut silent = TcpStream::connect(addr).unwrap();
    silent
        .set_read_timeout(Some(IDLE_TIMEOUT_AND_SLACK))
        .unwrap();
    let opened = Instant::now();
    let mut byte = [0u8; 1];
    let read = silent.read(&mut byte);
    assert!(
        matches!(read, Ok(0))
            || matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "the silent connection was not closed: {read:?} after {:?}",
        opened.elapsed()
    );
    assert!(guard.endpoint_stats().idle_timeouts > idle_before);

    // A flood of fresh wrong passwords: every one refused (401, or 429 once
    // the bcrypt queue is full), while the cached right credentials keep
    // being served.
    let refusals_before = guard.endpoint_stats().auth_refusals;
    let flooding = Arc::new(AtomicBool::new(true));
    let (unauthorized, too_many, other) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let started = Instant::now();
    let attackers: Vec<_> = (0..FLOOD_THREADS)
        .map(|t| {
            let (client, unauthorized, too_many, other) = (
                Arc::clone(&client),
                Arc::clone(&unauthorized),
                Arc::clone(&too_many),
                Arc::clone(&other),
            );
            std::thread::spawn(move || {
                for i in 0..FLOOD_REQUESTS / FLOOD_THREADS {
                    let wrong = basic(USER, &format!("guess-{t}-{i}"));
                    let counter =
                        match https_get(addr, &client, "/metrics", &[("Authorization", &wrong)]) {
                            Ok((401, _, body))
                                if !String::from_utf8_lossy(&body).contains("gym_") =>
                            {
                                &unauthorized
                            }
                            Ok((429, _, _)) => &too_many,
                            _ => &other,
                        };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let scraper = {
        let (flooding, client, right) = (Arc::clone(&flooding), Arc::clone(&client), right.clone());
        std::thread::spawn(move || {
            let mut served = 0u32;
            while flooding.load(Ordering::Relaxed) {
                let (status, _, _) =
                    https_get(addr, &client, "/metrics", &[("Authorization", &right)]).unwrap();
                assert_eq!(
                    status, 200,
                    "the right credentials were refused during the flood"
                );
                served += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            served
        })
    };
    for attacker in attackers {
        attacker.join().unwrap();
    }
    let flood_took = started.elapsed();
    flooding.store(false, Ordering::Relaxed);
    let served = scraper.join().unwrap();
    let (unauthorized, too_many, other) = (
        unauthorized.load(Ordering::Relaxed),
        too_many.load(Ordering::Relaxed),
        other.load(Ordering::Relaxed),
    );
    eprintln!(
        "flood: {FLOOD_REQUESTS} wrong passwords in {flood_took:?}: {unauthorized} × 401, {too_many} × 429, {other} other; {served} right scrapes served meanwhile"
    );
    assert_eq!(
        other, 0,
        "a wrong password got something other than 401 or 429"
    );
    assert_eq!(unauthorized + too_many, FLOOD_REQUESTS as u64);
    assert!(served >= 1);
    assert!(guard.endpoint_stats().auth_refusals >= refusals_before + FLOOD_REQUESTS as u64);

    // Rotation: a new certificate from another CA, written in place, is
    // served from the next connection on, without a restart.
    let ca2 = TestCa::new("rotated CA");
    let (cert2, key2) = ca2.server_cert();
    dir.write("server.key", &key2);
    dir.write("server.crt", &cert2);
    let client2 = client_config(&ca2.cert);
    let (status, _, _) =
        https_get(addr, &client2, "/metrics", &[("Authorization", &right)]).unwrap();
    assert_eq!(status, 200);
    assert!(https_get(addr, &client, "/metrics", &[("Authorization", &right)]).is_err());

    guard.shutdown().unwrap();
}
