//! Basic auth's timing (issue 26, finding 7): a user whose hash has a lower
//! cost fails as slowly as an unknown user, and a password over 72 bytes is
//! refused instead of truncated. Plain HTTP on loopback. (Global install:
//! its own binary.)

#![cfg(feature = "web-config")]

use std::time::{Duration, Instant};

use crate::common::pki::{basic, TestDir};
use crate::common::raw_http::exchange;
use gym_metrics_prom::PrometheusBuilder;

/// The median of `n` timings of `f`.
fn median(n: usize, mut f: impl FnMut(usize) -> Duration) -> Duration {
    let mut times: Vec<_> = (0..n).map(&mut f).collect();
    times.sort();
    times[n / 2]
}

#[test]
fn a_low_cost_user_fails_as_slowly_as_an_unknown_one_and_long_passwords_are_refused() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let dir = TestDir::new("basic-auth-timing");
    let long = "p".repeat(72);
    let web = dir.write(
        "web.yml",
        &format!(
            "basic_auth_users:\n  low: '{}'\n  high: '{}'\n  long: '{}'\n",
            bcrypt::hash("low's password", 4).unwrap(),
            bcrypt::hash("high's password", 10).unwrap(),
            bcrypt::hash(&long, 4).unwrap(),
        ),
    );
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .web_config_file(&web)
        .install()
        .unwrap();
    let addr = guard.local_addr();
    let fail = |user: &str, i: usize| {
        let wrong = basic(user, &format!("fresh wrong password {i}"));
        let asked = Instant::now();
        let r = exchange(addr, "GET", "/metrics", &[("Authorization", &wrong)]).unwrap();
        assert_eq!(r.status, 401);
        asked.elapsed()
    };
    // Interleaved, so a load spike hits both alike.
    let mut low = Vec::new();
    let mut unknown = Vec::new();
    for i in 0..7 {
        low.push(fail("low", i));
        unknown.push(fail("nobody", i));
    }
    let (low, unknown) = (median(7, |i| low[i]), median(7, |i| unknown[i]));
    eprintln!("to fail: low-cost user {low:?}, unknown user {unknown:?}");
    assert!(
        low * 2 >= unknown && unknown * 2 >= low,
        "told apart by time: low-cost user {low:?}, unknown user {unknown:?}"
    );

    // 72 bytes are bcrypt's whole reach: they pass, and anything longer is refused.
    let ok = exchange(
        addr,
        "GET",
        "/metrics",
        &[("Authorization", &basic("long", &long))],
    )
    .unwrap();
    assert_eq!(ok.status, 200);
    let tailed = basic("long", &format!("{long}any tail"));
    let r = exchange(addr, "GET", "/metrics", &[("Authorization", &tailed)]).unwrap();
    assert_eq!(r.status, 401, "a tail after byte 72 was accepted");
    guard.shutdown().unwrap();
}
