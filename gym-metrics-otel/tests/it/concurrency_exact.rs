//! Concurrency (RELIABILITY.md, case 3), OpenTelemetry backend: 16 threads
//! record mixed rollouts and verifications while the SDK exports every 50 ms
//! to a loopback collector. Every export has a success rate within `[0, 1]`
//! and counts never older than the export before it; the final export holds
//! every count, sum and the success fraction exactly.
//!
//! `GYM_RELIABILITY_OTEL_RECORDS` sets the records per thread (default
//! 1,000,000: a few seconds even in a debug build).
#![cfg(feature = "http-proto")]

use std::time::{Duration, Instant};

use crate::support::fake_collector::{
    double_value, find, histogram_point, int_value, Answer, FakeCollector,
};
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use gym_testkit::mixed_records::{record_mixed, records_per_thread, totals, Totals, THREADS};

#[test]
fn sixteen_threads_of_mixed_records_are_exact_and_every_export_is_consistent() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let per_thread = records_per_thread("GYM_RELIABILITY_OTEL_RECORDS");
    let collector = FakeCollector::start(Answer::Ok);
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::server("conc-0", "resources"))
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_millis(50))
        .shutdown_timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let recorder = &recorder;
            s.spawn(move || record_mixed(recorder, t, per_thread));
        }
    });
    let elapsed = started.elapsed();
    guard.shutdown().unwrap();

    let exports = collector.accepted();
    let mut previous = (0i64, 0i64);
    for (n, e) in exports.iter().enumerate() {
        if find(e, Instrument::VERIFY_COMPLETED.name).is_none() {
            continue;
        }
        let completed = int_value(e, Instrument::VERIFY_COMPLETED.name);
        let succeeded = int_value(e, Instrument::VERIFY_SUCCEEDED.name);
        assert!(
            succeeded <= completed,
            "export {n}: {succeeded} > {completed}"
        );
        assert!(
            completed >= previous.0 && succeeded >= previous.1,
            "export {n} went back: {completed}/{succeeded} after {previous:?}"
        );
        if find(e, Instrument::VERIFY_SUCCESS_RATE.name).is_some() {
            let rate = double_value(e, Instrument::VERIFY_SUCCESS_RATE.name);
            assert!((0.0..=1.0).contains(&rate), "export {n}: rate {rate}");
        }
        previous = (completed, succeeded);
    }

    let Totals {
        rollouts,
        rollout_sum,
        verifies,
        verify_sum,
        succeeded: ok,
    } = totals(per_thread);
    let last = exports.last().expect("the final export");
    eprintln!(
        "otel concurrency: {THREADS} x {per_thread} records in {elapsed:?}; {} exports checked",
        exports.len()
    );
    let r = histogram_point(last, Instrument::ROLLOUT_DURATION.name);
    assert_eq!((r.count, r.sum), (rollouts, Some(rollout_sum)));
    let v = histogram_point(last, Instrument::VERIFY_DURATION.name);
    assert_eq!((v.count, v.sum), (verifies, Some(verify_sum)));
    assert_eq!(
        int_value(last, Instrument::VERIFY_COMPLETED.name),
        verifies as i64
    );
    assert_eq!(
        int_value(last, Instrument::VERIFY_SUCCEEDED.name),
        ok as i64
    );
    assert_eq!(
        double_value(last, Instrument::VERIFY_SUCCESS_RATE.name),
        ok as f64 / verifies as f64
    );
}
