//! Basic auth under attack (issue 26, finding 2): a flood of fresh wrong
//! passwords does not starve a right password never seen before. First in
//! process, plain HTTP on loopback (global install: its own binary); then
//! as issue 43 found it, over TLS against a host under a 64-descriptor
//! limit, whose connection cap (12) is below the flooding threads (32).

#![cfg(feature = "web-config")]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::pki::{basic, TestDir};
use crate::common::raw_http::exchange;
use gym_metrics_prom::PrometheusBuilder;

/// The flooding threads, as in the attack.
const ATTACKERS: usize = 32;
/// How long the flood lasts.
const FLOOD: Duration = Duration::from_secs(10);
/// Fresh users the right client signs in as, one after another, each
/// never seen before its first scrape.
const FRESH_USERS: usize = 8;
/// The answer every right scrape must get within (issue 26's acceptance).
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

fn password(user: usize) -> String {
    format!("right password of user {user}")
}

#[test]
fn a_flood_of_fresh_wrong_passwords_does_not_starve_a_new_right_one() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let dir = TestDir::new("basic-auth-flood");
    // Cost 4: the attack's cost 10 scaled down for a loaded test machine
    // and an unoptimised bcrypt (the line is the same; each place in it is
    // 64 times shorter).
    let mut users = String::from("basic_auth_users:\n");
    for u in 0..FRESH_USERS {
        let hash = bcrypt::hash(password(u), 4).unwrap();
        users.push_str(&format!("  user{u}: '{hash}'\n"));
    }
    let web = dir.write("web.yml", &users);
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .web_config_file(&web)
        .install()
        .unwrap();
    let addr = guard.local_addr();

    let flooding = Arc::new(AtomicBool::new(true));
    let (refused, busy, other) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let started = Instant::now();
    let attackers: Vec<_> = (0..ATTACKERS)
        .map(|t| {
            let (flooding, refused, busy, other) = (
                Arc::clone(&flooding),
                Arc::clone(&refused),
                Arc::clone(&busy),
                Arc::clone(&other),
            );
            std::thread::spawn(move || {
                // Fresh wrong passwords under the very names the right
                // client uses, and under unknown names.
                for i in 0..100_000usize {
                    if !flooding.load(Ordering::Relaxed) || started.elapsed() > FLOOD * 2 {
                        break;
                    }
                    let user = match i % (FRESH_USERS + 1) {
                        FRESH_USERS => format!("mallory{t}"),
                        u => format!("user{u}"),
                    };
                    let wrong = basic(&user, &format!("guess {t} {i}"));
                    let counter =
                        match exchange(addr, "GET", "/metrics", &[("Authorization", &wrong)]) {
                            Ok(r) if r.status == 401 => &refused,
                            Ok(r) if r.status == 429 => &busy,
                            _ => &other,
                        };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    // The right client: a never-seen user every 1.25 s, scraping every
    // 250 ms meanwhile (its later scrapes find the verdict cached).
    std::thread::sleep(Duration::from_millis(500));
    let mut slowest = Duration::ZERO;
    let mut failures = Vec::new();
    let mut scrapes = 0;
    let mut first_checks = Vec::new();
    for u in 0..FRESH_USERS {
        let right = basic(&format!("user{u}"), &password(u));
        for n in 0..5 {
            let asked = Instant::now();
            let answer = exchange(addr, "GET", "/metrics", &[("Authorization", &right)]);
            let took = asked.elapsed();
            slowest = slowest.max(took);
            if n == 0 {
                first_checks.push(took);
            }
            scrapes += 1;
            match answer {
                Ok(r) if r.status == 200 && took <= ANSWER_WITHIN => {}
                Ok(r) => failures.push(format!("user{u}: {} after {took:?}", r.status)),
                Err(e) => failures.push(format!("user{u}: {e} after {took:?}")),
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    flooding.store(false, Ordering::Relaxed);
    for attacker in attackers {
        attacker.join().unwrap();
    }
    let (refused, busy, other) = (
        refused.load(Ordering::Relaxed),
        busy.load(Ordering::Relaxed),
        other.load(Ordering::Relaxed),
    );
    eprintln!(
        "flood over {:?}: {refused} × 401, {busy} × 429, {other} other; right scrapes: {scrapes}, {} failed, slowest {slowest:?}; each new user's first: {first_checks:?}",
        started.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "right scrapes not served within {ANSWER_WITHIN:?}: {failures:?}"
    );
    assert_eq!(other, 0, "a wrong password got neither 401 nor 429");
    assert!(refused > 0);
    guard.shutdown().unwrap();
}

/// The same flood as issue 43 found it (item 0): over TLS, against a host
/// under a 64-descriptor limit (the endpoint's cap is 12, fewer than the
/// flooding threads), each flooding request on a new connection. Before the
/// fix, each new connection evicted the oldest, so at hundreds a second a
/// request queued for its password check was closed before its turn, and a
/// right password never seen before got no answer at all.
#[cfg(target_os = "linux")]
mod over_tls_at_the_cap {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use crate::common::host::{child_main, Host, EXPECTED_CAP};
    use crate::common::pki::{basic, client_config, https_get, TestCa, TestDir};

    /// The host: this binary's test of that name.
    const CHILD: &str = "basic_auth_admission::over_tls_at_the_cap::child_host_serving_metrics";
    /// The flooding threads, as in the issue.
    const ATTACKERS: usize = 32;
    /// How long the flood lasts, as in the issue.
    const FLOOD: Duration = Duration::from_secs(6);
    /// The flood's head start before the first right sign-in.
    const HEAD_START: Duration = Duration::from_secs(1);
    /// Right users, each signing in once, never seen before.
    const FRESH_USERS: usize = 8;
    /// bcrypt's cost: the 10 scaled down for an unoptimised bcrypt
    /// on a loaded machine, so that one check takes about what cost 10
    /// takes in a release build (tens of milliseconds): the line of 12 lasts
    /// far longer than a connection lived under the flood before the fix
    /// (12 new ones after it: about 14 ms).
    const COST: u32 = 8;
    /// A right sign-in may be told 429 (with `Retry-After`) this many times.
    const MOST_RETRIES: usize = 3;
    /// A right sign-in's bound, retries included: 33 checks ahead at most
    /// (every flooding thread and the cap), one at a time.
    const SIGN_IN_WITHIN: Duration = Duration::from_secs(8);

    fn password(user: usize) -> String {
        format!("right password of user {user}")
    }

    /// Runs in the child only (a no-op in the parent's run).
    #[test]
    fn child_host_serving_metrics() {
        child_main();
    }

    #[test]
    fn a_flood_over_tls_at_the_cap_answers_every_request_and_lets_a_new_right_password_in() {
        if gym_testkit::ran_alone_in_child() {
            return;
        }
        let dir = TestDir::new("basic-auth-flood-tls");
        let ca = TestCa::new("gym test CA");
        let (cert, key) = ca.server_cert();
        dir.write("server.crt", &cert);
        dir.write("server.key", &key);
        let mut web = String::from(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n",
        );
        for u in 0..FRESH_USERS {
            let hash = bcrypt::hash(password(u), COST).unwrap();
            web.push_str(&format!("  user{u}: '{hash}'\n"));
        }
        let one_check = {
            let hash = bcrypt::hash("x", COST).unwrap();
            let started = Instant::now();
            assert!(!bcrypt::verify("y", &hash).unwrap());
            started.elapsed()
        };
        let web = dir.write("web.yml", &web);
        let host = Host::start(CHILD, Some(&web));
        assert_eq!(host.stats()["max_connections"], EXPECTED_CAP);
        let addr = host.metrics;
        let client = client_config(&ca.cert);

        // The flood: fresh wrong passwords, each on a new connection, under
        // the right users' names and unknown ones.
        let flooding = Arc::new(AtomicBool::new(true));
        let outcomes: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
        let started = Instant::now();
        let attackers: Vec<_> = (0..ATTACKERS)
            .map(|t| {
                let (flooding, outcomes, client) = (
                    Arc::clone(&flooding),
                    Arc::clone(&outcomes),
                    Arc::clone(&client),
                );
                std::thread::spawn(move || {
                    let mut i = 0usize;
                    while flooding.load(Ordering::Relaxed) && started.elapsed() < FLOOD {
                        let user = match i % (FRESH_USERS + 1) {
                            FRESH_USERS => format!("mallory{t}"),
                            u => format!("user{u}"),
                        };
                        let wrong = basic(&user, &format!("guess {t} {i}"));
                        let outcome = match https_get(
                            addr,
                            &client,
                            "/metrics",
                            &[("Authorization", &wrong)],
                        ) {
                            Ok((401, _, _)) => "401".to_string(),
                            Ok((429, head, _)) if head.contains("\r\nretry-after: ") => {
                                "429".to_string()
                            }
                            Ok((status, _, _)) => format!("status {status}"),
                            Err(e) => format!("no answer: {:?}", e.kind()),
                        };
                        *outcomes.lock().unwrap().entry(outcome).or_default() += 1;
                        i += 1;
                    }
                })
            })
            .collect();

        // The right client: a user never seen before signs in, one after
        // another, while the flood lasts.
        std::thread::sleep(HEAD_START);
        let mut sign_ins = Vec::new();
        let mut failures = Vec::new();
        for u in 0..FRESH_USERS {
            if started.elapsed() >= FLOOD {
                break;
            }
            let right = basic(&format!("user{u}"), &password(u));
            let asked = Instant::now();
            let mut told_429 = 0;
            let outcome = loop {
                match https_get(addr, &client, "/metrics", &[("Authorization", &right)]) {
                    Ok((200, _, _)) => break Ok(()),
                    Ok((429, head, _))
                        if told_429 < MOST_RETRIES && head.contains("\r\nretry-after: 1") =>
                    {
                        told_429 += 1;
                        std::thread::sleep(Duration::from_secs(1));
                    }
                    Ok((status, _, _)) => break Err(format!("status {status}")),
                    Err(e) => break Err(format!("no answer: {e}")),
                }
            };
            let took = asked.elapsed();
            if outcome.is_err() || took > SIGN_IN_WITHIN {
                failures.push(format!(
                    "user{u}: {outcome:?} after {took:?}, {told_429} × 429"
                ));
            }
            sign_ins.push(took);
        }
        // The flood goes on to its end.
        if let Some(rest) = FLOOD.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
        flooding.store(false, Ordering::Relaxed);
        for attacker in attackers {
            attacker.join().unwrap();
        }
        let stats = host.stats();
        let outcomes = outcomes.lock().unwrap().clone();
        sign_ins.sort();
        eprintln!(
            "flood over tls at the cap ({ATTACKERS} threads, {:?}, bcrypt cost {COST}: {one_check:?} a check here): flood answers {outcomes:?}; \
             new right users' sign-ins (sorted) {sign_ins:?}; {} failed; endpoint {stats:?}",
            started.elapsed(),
            failures.len()
        );
        assert!(
            failures.is_empty(),
            "right sign-ins failed: {failures:?}\n{}",
            host.log()
        );
        assert!(
            sign_ins.len() >= 3,
            "only {} new users signed in",
            sign_ins.len()
        );
        let unanswered: u64 = outcomes
            .iter()
            .filter(|(k, _)| k.as_str() != "401" && k.as_str() != "429")
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            unanswered, 0,
            "flood requests without an answer: {outcomes:?}"
        );
        assert!(
            outcomes.get("401").copied().unwrap_or(0) > 0,
            "{outcomes:?}"
        );
        assert_eq!(stats["accept_errors"], 0, "{stats:?}");
        assert!(stats["open_connections"] <= EXPECTED_CAP, "{stats:?}");
    }
}
