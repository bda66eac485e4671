//! A collector restarted mid-run: everything recorded while it was down
//! arrives with the first export after it returns (cumulative totals).
#![cfg(feature = "http-proto")]

use crate::support;

use std::time::Duration;

use gym_metrics_api::backend::{Instrument, Recorder};
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use support::fake_collector::{double_value, histogram_point, int_value, Answer, FakeCollector};
use support::*;

#[test]
fn totals_are_exact_after_a_restart() {
    let mut collector = FakeCollector::start(Answer::Ok);
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::orchestrator())
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_millis(150))
        .export_timeout(Duration::from_millis(500))
        .shutdown_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    let before = collector.wait_accepted(1, Duration::from_secs(3));
    assert_eq!(
        histogram_point(before.last().unwrap(), Instrument::ROLLOUT_DURATION.name).count,
        3
    );

    collector.stop();
    let accepted_before_outage = collector.accepted().len();
    let mut rollouts = rollout_values();
    let (mut completed, mut succeeded) = (4i64, 3i64);
    for i in 0..1_000 {
        let ms = 7.0 + (i % 50) as f64 * 1_000.0;
        recorder.record_rollout_duration_ms(ms);
        rollouts.push(ms);
        recorder.record_verify_ms(30.0, i % 3 == 0);
        completed += 1;
        succeeded += i64::from(i % 3 == 0);
    }
    std::thread::sleep(Duration::from_millis(700)); // several failed exports
    assert_eq!(collector.accepted().len(), accepted_before_outage);

    collector.restart();
    let after = collector.wait_accepted(accepted_before_outage + 1, Duration::from_secs(5));
    let latest = after.last().unwrap();
    let p = histogram_point(latest, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(p.count, rollouts.len() as u64);
    assert_eq!(p.sum, Some(rollouts.iter().sum::<f64>()));
    assert_eq!(p.bucket_counts, expected_bucket_counts(&rollouts));
    assert_eq!(
        int_value(latest, Instrument::VERIFY_COMPLETED.name),
        completed
    );
    assert_eq!(
        int_value(latest, Instrument::VERIFY_SUCCEEDED.name),
        succeeded
    );
    let rate = double_value(latest, Instrument::VERIFY_SUCCESS_RATE.name);
    assert!(
        (rate - succeeded as f64 / completed as f64).abs() < 1e-12,
        "{rate}"
    );
    guard.shutdown().unwrap();
}
