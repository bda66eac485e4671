//! The final scrape (`PrometheusBuilder::final_scrape_wait`): a process that
//! shuts down keeps serving until a scrape rendered after the shutdown call
//! has been answered, so the scraper sees the last increment. (Global
//! install: its own binary.)

use std::time::{Duration, Instant};

use crate::common::exposition::parse;
use crate::common::raw_http::exchange;
use gym_metrics_prom::PrometheusBuilder;

/// Far longer than the scraper's interval: the wait ends by the scrape.
const MAX_WAIT: Duration = Duration::from_secs(20);
const SCRAPE_EVERY: Duration = Duration::from_millis(50);
/// How long after shutdown began the scraper comes.
const SCRAPER_COMES_AFTER: Duration = Duration::from_millis(200);
/// The scraper stops by itself after this, whatever happens.
const HARD_LIMIT: Duration = Duration::from_secs(40);

fn completed(body: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(body);
    parse(&text)["gym_verify_completed_total"]
        .samples
        .values()
        .next()
        .map(|v| *v as u64)
        .expect("gym_verify_completed_total")
}

#[test]
fn a_scrape_after_shutdown_was_asked_for_is_answered_and_holds_the_last_increment() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .final_scrape_wait(MAX_WAIT)
        .install()
        .unwrap();
    let addr = guard.local_addr();
    gym_metrics_api::record_verify_ms(1.0, true);
    let first = exchange(addr, "GET", "/metrics", &[]).unwrap();
    assert_eq!(completed(&first.body), 1);

    // A scraper that comes only after shutdown has begun (as Prometheus does
    // on its next interval), then scrapes until the endpoint is gone, keeping
    // the last complete answer and when it arrived.
    let (shutting_down, began) = std::sync::mpsc::channel::<()>();
    let scraper = std::thread::spawn(move || {
        let started = Instant::now();
        began.recv_timeout(HARD_LIMIT).unwrap();
        std::thread::sleep(SCRAPER_COMES_AFTER);
        let mut last = None;
        while started.elapsed() < HARD_LIMIT {
            match exchange(addr, "GET", "/metrics", &[]) {
                Ok(r) => {
                    assert_eq!(r.status, 200);
                    let length: usize = r.header("content-length").unwrap().parse().unwrap();
                    assert_eq!(r.body.len(), length, "a truncated scrape");
                    last = Some((r.body, Instant::now()));
                }
                Err(_) => break,
            }
            std::thread::sleep(SCRAPE_EVERY);
        }
        last
    });

    // The last increment, then the process ends.
    gym_metrics_api::record_verify_ms(2.0, false);
    let asked = Instant::now();
    shutting_down.send(()).unwrap();
    let outcome = guard.shutdown();
    let returned = asked.elapsed();
    let last = scraper.join().unwrap();
    eprintln!("final scrape: {outcome:?}; shutdown returned after {returned:?}");
    let (body, arrived) = last.expect("no scrape was answered after shutdown began");
    // A missed wait is an error (and would take the whole MAX_WAIT).
    outcome.expect("shutdown must have seen the final scrape answered");
    assert!(returned < MAX_WAIT, "{returned:?}");
    assert!(
        arrived > asked,
        "the last scrape came before shutdown was asked for"
    );
    assert_eq!(
        completed(&body),
        2,
        "the final scrape lacks the last increment"
    );
}
