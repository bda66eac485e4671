//! A collector that refuses connections: recording stays cheap and memory
//! flat, the failure is logged once (rate-limited), shutdown is bounded.
#![cfg(feature = "http-proto")]

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::counting_logger::CountingLogger;
use crate::support::*;

#[test]
fn refused_collector_costs_nothing_logs_once_and_shutdown_is_bounded() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}/v1/metrics");
    let deadline = Duration::from_secs(2);
    let (recorder, guard) = fault_pipeline(endpoint.clone(), deadline);

    let before = record_cost_ns(&recorder, 7, 5_000);
    let rss_before = rss_bytes();
    let failing_since = Instant::now();
    while failing_since.elapsed() < Duration::from_millis(1500) {
        record_cost_ns(&recorder, 1, 5_000);
        std::thread::sleep(Duration::from_millis(20));
    }
    let during = record_cost_ns(&recorder, 7, 5_000);
    let rss_growth = rss_bytes().saturating_sub(rss_before);
    eprintln!("record cost: {before:.0} ns before failures, {during:.0} ns after 1.5 s of failures; RSS growth {} KiB", rss_growth / 1024);
    assert!(
        during < before * 3.0 + 2_000.0,
        "record cost grew: {before} -> {during} ns"
    );
    assert!(
        rss_growth < 16 * 1024 * 1024,
        "memory grew by {rss_growth} bytes"
    );

    let warnings = log.lines(log::Level::Warn);
    assert_eq!(
        warnings.len(),
        1,
        "rate-limited to one line a minute: {warnings:#?}"
    );
    assert!(warnings[0].contains(&endpoint), "{}", warnings[0]);

    let start = Instant::now();
    let result = guard.shutdown();
    let took = start.elapsed();
    eprintln!("shutdown against a refusing collector took {took:?}: {result:?}");
    assert!(result.is_err(), "the final export cannot have succeeded");
    assert!(took < deadline + Duration::from_millis(300), "{took:?}");
}
