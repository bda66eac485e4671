//! Basic auth under attack (issue 26, finding 2): a flood of fresh wrong
//! passwords does not starve a right password never seen before. Plain HTTP on loopback (the admission
//! is the same behind TLS). (Global install: its own binary.)

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
