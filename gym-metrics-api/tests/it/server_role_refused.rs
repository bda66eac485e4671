//! Scenario: a server may not write the fleet size: refused, named, logged once,
//! and nothing recorded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::CountingRecorder;
use gym_metrics_api::{install, Role, RoleError};

static WARNINGS: AtomicUsize = AtomicUsize::new(0);

struct CountWarnings;
impl log::Log for CountWarnings {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record) {
        if r.level() == log::Level::Warn && r.args().to_string().contains("gym.servers.active") {
            WARNINGS.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn flush(&self) {}
}

#[test]
fn server_is_refused_and_nothing_is_recorded() {
    if gym_testkit::ran_in_child() {
        return;
    }
    log::set_logger(&CountWarnings).unwrap();
    log::set_max_level(log::LevelFilter::Warn);

    let role = Role::server("math-verifier-0", "resources");
    let (counts, forward) = CountingRecorder::leaked(role.clone());
    let installation = install(forward).unwrap();
    assert!(installation.fleet_size().is_none());

    let err = gym_metrics_api::record_active_servers(5).unwrap_err();
    assert_eq!(err, RoleError { role: role.clone() });
    let msg = err.to_string();
    assert!(
        msg.contains("math-verifier-0") && msg.contains("orchestrator"),
        "{msg}"
    );
    assert!(gym_metrics_api::record_active_servers(6).is_err());
    assert!(counts.active_servers.lock().unwrap().is_empty());
    assert_eq!(WARNINGS.load(Ordering::SeqCst), 1, "logged once");

    // Everything else a server records still arrives.
    let mut timer = gym_metrics_api::VerifyTimer::start();
    timer.succeeded();
    drop(timer);
    {
        let _failed = gym_metrics_api::VerifyTimer::start();
    }
    gym_metrics_api::record_verify(Duration::from_millis(3), true);
    let c = counts.tally.snapshot();
    assert_eq!((c.completed, c.succeeded), (3, 2));
    drop(gym_metrics_api::RolloutTimer::start());
    gym_metrics_api::RolloutTimer::start().discard();
    assert_eq!(counts.rollout_ms.lock().unwrap().len(), 1);
}
