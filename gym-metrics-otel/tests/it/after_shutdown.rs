//! Process lifecycle (RELIABILITY.md, case 5), OpenTelemetry backend: after
//! the guard's shutdown, recording through the facade from other threads is a
//! no-op: no panic, no export, no log flood. (Global install: its own binary.)
#![cfg(feature = "http-proto")]

use std::time::Duration;

use crate::support::counting_logger::CountingLogger;
use crate::support::fake_collector::{Answer, FakeCollector};
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

#[test]
fn recording_after_shutdown_from_threads_is_a_no_op() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let collector = FakeCollector::start(Answer::Ok);
    let guard = OtelBuilder::new()
        .role(Role::orchestrator())
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_millis(100))
        .shutdown_timeout(Duration::from_secs(3))
        .install()
        .unwrap();
    let fleet = guard.fleet_size().expect("orchestrator");
    gym_metrics_api::record_verify_ms(40.0, true);
    guard.shutdown().unwrap();
    let exports = collector.attempts();
    let warnings_before = log.lines(log::Level::Warn).len() + log.lines(log::Level::Error).len();

    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..10_000u32 {
                    gym_metrics_api::record_verify_ms(f64::from(i % 500), (i + t) % 2 == 0);
                    gym_metrics_api::record_rollout_duration(Duration::from_millis(u64::from(i)));
                    fleet.set(u64::from(i % 4));
                    let _ = gym_metrics_api::record_active_servers(3);
                }
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().is_ok(), "recording after shutdown panicked");
    }
    std::thread::sleep(Duration::from_millis(400)); // several export intervals
    assert_eq!(collector.attempts(), exports, "an export after shutdown");
    let warnings = log.lines(log::Level::Warn).len() + log.lines(log::Level::Error).len();
    assert!(
        warnings - warnings_before <= 2,
        "160,000 records after shutdown logged {} lines: {:#?}",
        warnings - warnings_before,
        log.lines(log::Level::Warn)
    );
}
