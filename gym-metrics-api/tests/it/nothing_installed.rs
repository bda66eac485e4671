//! Scenario: nothing is installed. Every call is a silent no-op.

use std::time::Duration;

#[test]
fn every_call_is_a_no_op_before_install() {
    if gym_testkit::ran_in_child() {
        return;
    }
    assert!(!gym_metrics_api::enabled());
    assert!(gym_metrics_api::role().is_none());
    gym_metrics_api::record_rollout_duration(Duration::from_millis(5));
    gym_metrics_api::record_rollout_duration_ms(f64::NAN);
    gym_metrics_api::record_verify(Duration::from_millis(5), true);
    gym_metrics_api::record_verify_ms(-1.0, false);
    assert_eq!(gym_metrics_api::record_active_servers(3), Ok(()));
    // Bad values are not even inspected when nothing is installed.
    assert_eq!(gym_metrics_api::dropped_values(), 0);
    drop(gym_metrics_api::RolloutTimer::start());
    let mut v = gym_metrics_api::VerifyTimer::start();
    v.succeeded();
    drop(v);
    assert!(!gym_metrics_api::enabled());
}
