//! `NEMO_GYM_OTEL_SPAN_GROUPS=default` (Gym's own default preset): rollouts
//! are recorded and served, verifications are not, as in Gym.
//! (Global state: its own test binary.)

use std::time::Duration;

use crate::common::exposition::parse;
use crate::common::raw_http::exchange;
use gym_metrics_api::{Group, Role, VerifyTimer};
use gym_metrics_kit::env::GymEnv;
use gym_metrics_prom::PrometheusBuilder;

#[test]
fn the_default_preset_serves_rollouts_but_no_verifications() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let gym =
        GymEnv::read(|name| (name == "NEMO_GYM_OTEL_SPAN_GROUPS").then(|| "default".to_string()))
            .unwrap();
    assert!(gym
        .install_notice("gym-metrics-prom")
        .unwrap()
        .contains("gym.verify.* will not be recorded"));
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-0", "resources_servers"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .gym_env(gym)
        .install()
        .unwrap();
    assert!(!gym_metrics_api::group_enabled(Group::Verify));
    assert!(gym_metrics_api::group_enabled(Group::Rollout));

    gym_metrics_api::record_rollout_duration(Duration::from_millis(1200));
    gym_metrics_api::record_rollout_duration_ms(30.0);
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    gym_metrics_api::record_verify_ms(40.0, false);
    VerifyTimer::start().finish(true);

    let r = exchange(guard.local_addr(), "GET", "/metrics", &[]).unwrap();
    assert_eq!(r.status, 200);
    let families = parse(&String::from_utf8(r.body).unwrap());
    let count = &families["gym_rollout_duration_ms_milliseconds"];
    let rollouts: f64 = count
        .samples
        .iter()
        .filter(|((name, _), _)| name.ends_with("_count"))
        .map(|(_, v)| *v)
        .sum();
    assert_eq!(rollouts, 2.0);
    assert!(
        !families.contains_key("gym_verify_duration_ms_milliseconds"),
        "{:?}",
        families.keys()
    );
    assert!(!families.contains_key("gym_verify_success_rate"));
    // The counters are exported from the start, and stay at zero.
    let completed: Vec<f64> = families["gym_verify_completed_total"]
        .samples
        .values()
        .copied()
        .collect();
    assert_eq!(completed, [0.0]);
    guard.shutdown().unwrap();
}
