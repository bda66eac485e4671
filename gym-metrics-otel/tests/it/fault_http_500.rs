//! A collector answering 500: failures logged once, nothing lost once it
//! answers 200 again.
#![cfg(feature = "http-proto")]

use std::time::Duration;

use crate::support::counting_logger::CountingLogger;
use crate::support::fake_collector::{histogram_point, int_value, Answer, FakeCollector};
use crate::support::*;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

#[test]
fn failing_collector_is_logged_once_and_recovery_sends_full_totals() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let collector = FakeCollector::start(Answer::InternalError);
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::orchestrator())
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_millis(100))
        .shutdown_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    std::thread::sleep(Duration::from_millis(800));
    let attempts = collector.attempts();
    assert!(
        attempts >= 4,
        "{attempts} export attempts in 800 ms at a 100 ms interval"
    );
    assert!(collector.accepted().is_empty());
    assert_eq!(
        log.lines(log::Level::Warn).len(),
        1,
        "{:#?}",
        log.lines(log::Level::Warn)
    );

    collector.set_answer(Answer::Ok);
    let accepted = collector.wait_accepted(1, Duration::from_secs(3));
    let first = accepted
        .first()
        .expect("an export after the collector recovered");
    let rollouts = histogram_point(first, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(rollouts.count, 3);
    assert_eq!(rollouts.sum, Some(48520.0));
    assert_eq!(int_value(first, Instrument::VERIFY_COMPLETED.name), 4);
    assert_eq!(
        int_value(first, Instrument::SERVERS_ACTIVE.name),
        FLEET_SIZE as i64
    );
    // The exporter logs the recovery once the 200 is back, a moment after
    // the collector has the request.
    let recovered = |infos: &[String]| infos.iter().any(|l| l.contains("recovered"));
    let logged = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        recovered(&log.lines(log::Level::Info))
    });
    assert!(logged, "{:#?}", log.lines(log::Level::Info));
    guard.shutdown().unwrap();
}
