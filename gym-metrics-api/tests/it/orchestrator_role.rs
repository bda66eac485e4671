//! Scenario: the orchestrator writes the fleet size, through the free function
//! and through the capability, and records the other instruments too.

use std::time::Duration;

use crate::common::CountingRecorder;
use gym_metrics_api::{install, FleetTarget, Role};

#[test]
fn orchestrator_sets_the_fleet_size() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (counts, forward) = CountingRecorder::leaked(Role::orchestrator());
    let installation = install(forward).unwrap();
    assert!(gym_metrics_api::enabled());
    let fleet = installation
        .fleet_size()
        .expect("orchestrator gets the capability");
    fleet.set(4);
    assert_eq!(gym_metrics_api::record_active_servers(3), Ok(()));
    fleet.set(0);
    assert_eq!(counts.active_servers.lock().unwrap().as_slice(), &[4, 3, 0]);

    // The same capability publishes the fleet's targets, whole list each time.
    let server =
        FleetTarget::of_process("127.0.0.1:9101", &Role::server("r-0", "resources"), None).unwrap();
    fleet.publish_targets(std::slice::from_ref(&server));
    fleet.publish_targets(&[]);
    assert_eq!(
        counts.published_targets.lock().unwrap().as_slice(),
        &[vec![server], vec![]]
    );

    gym_metrics_api::record_rollout_duration(Duration::from_micros(1_500));
    assert_eq!(counts.rollout_ms.lock().unwrap().as_slice(), &[1.5]);

    // The clock is read only because a backend is installed; a timer records once.
    let timer = gym_metrics_api::RolloutTimer::start();
    std::thread::sleep(Duration::from_millis(20));
    drop(timer);
    let rollouts = counts.rollout_ms.lock().unwrap().clone();
    assert_eq!(rollouts.len(), 2);
    assert!(rollouts[1] >= 20.0, "{rollouts:?}");
}
