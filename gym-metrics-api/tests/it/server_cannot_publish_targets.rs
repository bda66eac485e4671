//! Scenario: a server install holds no fleet capability, so it can neither
//! publish scrape targets nor write a file_sd file through the API; an
//! orchestrator's published list reaches the backend whole.

use crate::common::CountingRecorder;
use gym_metrics_api::{install, FleetTarget, Role};

#[test]
fn a_server_install_has_no_way_to_publish_the_fleet() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_counts, forward) = CountingRecorder::leaked(Role::server("resources-0", "resources"));
    let installation = install(forward).unwrap();
    // The capability is the only door to publish_targets and write_file_sd.
    assert!(installation.fleet_size().is_none());
    let target =
        FleetTarget::of_process("127.0.0.1:9101", installation.role(), Some("run-1")).unwrap();
    assert_eq!(target.labels()["gym_role"], "server");
}
