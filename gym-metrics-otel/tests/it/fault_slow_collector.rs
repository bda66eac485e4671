//! A slow collector (RELIABILITY.md, case 2): each answer comes 1.5 s late,
//! past the 500 ms export timeout. Recording is never slowed by the hung
//! exports, memory stays flat, shutdown returns within its deadline; and a
//! collector slow but within the timeout receives the exact totals.
#![cfg(feature = "http-proto")]

use std::time::{Duration, Instant};

use crate::support::fake_collector::{histogram_point, int_value, Answer, FakeCollector};
use crate::support::*;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

const PER_BATCH: usize = 5_000;

/// The two tests run one at a time: the first measures the process's memory,
/// which the other's collector and pipeline threads would otherwise inflate.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_collector_slower_than_the_timeout_never_slows_recording_and_shutdown_is_bounded() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _serial = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let collector = FakeCollector::start(Answer::Slow(Duration::from_millis(1500)));
    let deadline = Duration::from_secs(2);
    let (recorder, guard) = fault_pipeline(collector.endpoint(), deadline);

    let before = record_cost_ns(&recorder, 7, PER_BATCH);
    let rss_before = rss_bytes();
    let mut slowest_batch = Duration::ZERO;
    let slow_since = Instant::now();
    while slow_since.elapsed() < Duration::from_millis(2000) {
        let t = Instant::now();
        record_cost_ns(&recorder, 1, PER_BATCH);
        slowest_batch = slowest_batch.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    let during = record_cost_ns(&recorder, 7, PER_BATCH);
    let rss_growth = rss_bytes().saturating_sub(rss_before);
    let attempts = collector.attempts();
    eprintln!(
        "slow: {attempts} exports reached it; record cost {before:.0} ns -> {during:.0} ns, slowest batch of {PER_BATCH} {slowest_batch:?}; RSS growth {} KiB",
        rss_growth / 1024
    );
    assert!(attempts >= 2, "{attempts} export attempts");
    assert!(
        during < before * 3.0 + 2_000.0,
        "record cost grew: {before} -> {during} ns"
    );
    // A batch that had waited for an export would take the 500 ms timeout at least.
    assert!(
        slowest_batch < Duration::from_millis(400),
        "a record waited: {slowest_batch:?}"
    );
    assert!(
        rss_growth < 16 * 1024 * 1024,
        "memory grew by {rss_growth} bytes"
    );

    let start = Instant::now();
    let result = guard.shutdown();
    let took = start.elapsed();
    eprintln!("slow: shutdown took {took:?}: {result:?}");
    assert!(took < deadline + Duration::from_millis(300), "{took:?}");
}

#[test]
fn a_collector_slow_within_the_timeout_gets_the_exact_totals() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _serial = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let collector = FakeCollector::start(Answer::Slow(Duration::from_millis(300)));
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::orchestrator())
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_millis(100))
        .export_timeout(Duration::from_secs(2))
        .shutdown_timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    let start = Instant::now();
    let result = guard.shutdown();
    assert!(result.is_ok(), "{result:?} after {:?}", start.elapsed());
    let last = collector
        .slow_answered()
        .pop()
        .expect("the final export, answered late but answered");
    let rollouts = histogram_point(&last, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(rollouts.count, ROLLOUTS_MS.len() as u64);
    assert_eq!(rollouts.sum, Some(ROLLOUTS_MS.iter().sum::<f64>()));
    assert_eq!(
        int_value(&last, Instrument::VERIFY_COMPLETED.name),
        VERIFIES.len() as i64
    );
    assert_eq!(
        int_value(&last, Instrument::SERVERS_ACTIVE.name),
        FLEET_SIZE as i64
    );
}
