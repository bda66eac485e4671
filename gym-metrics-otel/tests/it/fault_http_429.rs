//! A collector answering 429 Too Many Requests (RELIABILITY.md, case 2):
//! recording stays cheap and memory flat while every export is refused,
//! nothing is lost (the first export it accepts carries the exact totals),
//! and shutdown returns within its deadline.
#![cfg(feature = "http-proto")]

use std::time::{Duration, Instant};

use crate::support::fake_collector::{histogram_point, int_value, Answer, FakeCollector};
use crate::support::*;
use gym_metrics_api::backend::Instrument;

const PER_BATCH: usize = 5_000;

#[test]
fn a_throttling_collector_costs_nothing_and_loses_nothing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeCollector::start(Answer::TooManyRequests);
    let deadline = Duration::from_secs(2);
    let (recorder, guard) = fault_pipeline(collector.endpoint(), deadline);

    let mut batches = 0u64;
    let before = record_cost_ns(&recorder, 7, PER_BATCH);
    batches += 7;
    let rss_before = rss_bytes();
    let throttled_since = Instant::now();
    while throttled_since.elapsed() < Duration::from_millis(1500) {
        record_cost_ns(&recorder, 1, PER_BATCH);
        batches += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    let during = record_cost_ns(&recorder, 7, PER_BATCH);
    batches += 7;
    let rss_growth = rss_bytes().saturating_sub(rss_before);
    let attempts = collector.attempts();
    eprintln!(
        "429: {attempts} refused exports; record cost {before:.0} ns -> {during:.0} ns; RSS growth {} KiB",
        rss_growth / 1024
    );
    assert!(
        attempts >= 5,
        "{attempts} export attempts in 1.5 s at a 100 ms interval"
    );
    assert!(collector.accepted().is_empty());
    assert!(
        during < before * 3.0 + 2_000.0,
        "record cost grew: {before} -> {during} ns"
    );
    assert!(
        rss_growth < 16 * 1024 * 1024,
        "memory grew by {rss_growth} bytes"
    );

    // The collector accepts again: the next export holds every record (cumulative).
    collector.set_answer(Answer::Ok);
    let accepted = collector.wait_accepted(1, Duration::from_secs(3));
    let first = accepted
        .first()
        .expect("an export once the collector accepts");
    let n = batches * PER_BATCH as u64;
    let per_batch_sum: f64 = (0..PER_BATCH).map(|i| 100.0 + i as f64).sum();
    let rollouts = histogram_point(first, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(rollouts.count, n);
    assert_eq!(rollouts.sum, Some(batches as f64 * per_batch_sum));
    assert_eq!(
        int_value(first, Instrument::VERIFY_COMPLETED.name),
        n as i64
    );
    assert_eq!(
        int_value(first, Instrument::VERIFY_SUCCEEDED.name),
        (batches * PER_BATCH.div_ceil(2) as u64) as i64
    );

    let start = Instant::now();
    let result = guard.shutdown();
    let took = start.elapsed();
    assert!(result.is_ok(), "{result:?}");
    assert!(took < deadline + Duration::from_millis(300), "{took:?}");
}
