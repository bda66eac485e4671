//! Scenario: NaN, infinities, negatives and durations past
//! `Instrument::MAX_DURATION` (584 years: `1e308`, `f64::MAX` ms,
//! `Duration::MAX`) are dropped, never recorded, never a panic, counted, and
//! warned about at most once a minute.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::CountingRecorder;
use gym_metrics_api::{install, Role};

static WARNINGS: AtomicUsize = AtomicUsize::new(0);

struct CountWarnings;
impl log::Log for CountWarnings {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        if r.level() == log::Level::Warn && r.args().to_string().contains("dropped") {
            WARNINGS.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn flush(&self) {}
}

#[test]
fn bad_values_are_dropped_and_warned_once() {
    if gym_testkit::ran_in_child() {
        return;
    }
    log::set_logger(&CountWarnings).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    let (counts, forward) = CountingRecorder::leaked(Role::server("s-0", "resources"));
    install(forward).unwrap();

    let bad = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.5,
        -1e300,
        1e308,
        f64::MAX,
    ];
    for v in bad {
        gym_metrics_api::record_rollout_duration_ms(v);
        gym_metrics_api::record_verify_ms(v, true);
    }
    gym_metrics_api::record_rollout_duration(std::time::Duration::MAX);
    gym_metrics_api::record_verify(std::time::Duration::MAX, true);
    assert_eq!(gym_metrics_api::dropped_values(), 2 * bad.len() as u64 + 2);
    assert_eq!(counts.rollouts.load(Ordering::SeqCst), 0);
    assert_eq!(counts.tally.snapshot().completed, 0);
    assert_eq!(WARNINGS.load(Ordering::SeqCst), 1, "at most once a minute");

    gym_metrics_api::record_rollout_duration_ms(12.5);
    gym_metrics_api::record_verify_ms(0.0, false);
    let max = gym_metrics_api::backend::Instrument::MAX_DURATION_MS;
    gym_metrics_api::record_verify_ms(max, true); // the largest taken
    assert_eq!(counts.rollout_ms.lock().unwrap().as_slice(), &[12.5]);
    let c = counts.tally.snapshot();
    assert_eq!((c.completed, c.succeeded), (2, 1));
}
