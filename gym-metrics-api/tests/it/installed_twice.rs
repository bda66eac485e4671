//! Scenario: a second install is refused and hands the recorder back;
//! the first recorder stays in place.

use std::time::Duration;

use crate::common::CountingRecorder;
use gym_metrics_api::{install, Role};

#[test]
fn second_install_returns_the_recorder_and_first_stays() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (first, forward) = CountingRecorder::leaked(Role::orchestrator());
    install(forward).expect("first install");
    let second = CountingRecorder::new(Role::server("s-1", "resources"));
    let err = install(second).expect_err("second install must fail");
    assert!(err.to_string().contains("already installed"), "{err}");
    let back = err.into_inner();
    assert_eq!(back.role, Role::server("s-1", "resources"));

    gym_metrics_api::record_rollout_duration(Duration::from_millis(7));
    assert_eq!(first.rollout_ms.lock().unwrap().as_slice(), &[7.0]);
    assert_eq!(back.rollout_ms.lock().unwrap().len(), 0);
    assert!(gym_metrics_api::role().unwrap().is_orchestrator());
}
