//! `NEMO_GYM_OTEL_ENABLED=false`: the backend installs (the role is
//! declared) but opens no `/metrics` listener and records nothing.
//! (Global state: its own test binary.)

use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use gym_metrics_api::{Group, Role};
use gym_metrics_kit::env::GymEnv;
use gym_metrics_prom::PrometheusBuilder;

#[test]
fn enabled_false_installs_without_a_listener() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // A loopback port that was free a moment ago: the one we would listen on.
    let port = TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gym = GymEnv::read(|name| (name == "NEMO_GYM_OTEL_ENABLED").then(|| "false".to_string()))
        .unwrap();
    let guard = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], port))
        .gym_env(gym)
        .install()
        .unwrap();
    assert!(!guard.is_serving());
    assert_eq!(guard.local_addr().port(), 0);
    assert_eq!(guard.endpoint_stats().accepted, 0);
    let refused =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(2));
    assert!(refused.is_err(), "something listens on {port}");

    // The role is declared as with any install.
    assert!(gym_metrics_api::role().unwrap().is_orchestrator());
    assert!(guard.fleet_size().is_some());
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    gym_metrics_api::record_rollout_duration(Duration::from_millis(400));
    guard.fleet_size().unwrap().set(3);
    let text = guard.handle().render();
    assert!(
        !text.contains("gym_verify_duration_ms_milliseconds_count"),
        "{text}"
    );
    assert!(
        !text.contains("gym_rollout_duration_ms_milliseconds_count"),
        "{text}"
    );
    assert!(!text.contains("gym_servers_active{"), "{text}");
    // The verify gate still answers as configured (every group here).
    assert!(gym_metrics_api::group_enabled(Group::Verify));
    guard.shutdown().unwrap();
}
