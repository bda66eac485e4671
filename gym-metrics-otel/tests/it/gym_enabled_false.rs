//! `NEMO_GYM_OTEL_ENABLED=false` (read through `from_env_lookup`, as from
//! the environment a Gym orchestrator hands its servers): the backend
//! installs, declares the role, and sends the collector nothing, not even at
//! shutdown. (Global state: its own test binary.)

use std::time::Duration;

use crate::support::fake_collector::{Answer, FakeCollector};
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

#[test]
fn enabled_false_sends_nothing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeCollector::start(Answer::Ok);
    let endpoint = collector.endpoint();
    let env = |name: &str| match name {
        "NEMO_GYM_OTEL_ENABLED" => Some("false".to_string()),
        "NEMO_GYM_OTEL_EXPORTER" => Some("otlp".to_string()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("http/protobuf".to_string()),
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some(endpoint.clone()),
        _ => None,
    };
    let guard = OtelBuilder::from_env_lookup(env)
        .unwrap()
        .role(Role::orchestrator())
        .install()
        .unwrap();
    assert!(gym_metrics_api::role().is_some_and(Role::is_orchestrator));
    gym_metrics_api::record_rollout_duration(Duration::from_millis(300));
    gym_metrics_api::record_verify(Duration::from_millis(30), true);
    guard.fleet_size().expect("orchestrator").set(2);
    // The shutdown that would flush a final export.
    guard.force_flush().unwrap();
    guard.shutdown().unwrap();
    assert_eq!(collector.attempts(), 0, "nothing may reach the collector");
}
