//! `NEMO_GYM_OTEL_SPAN_GROUPS=default` (Gym's own default preset): the
//! collector gets rollouts and no verifications, as from a Python Gym
//! server, and install says so in one log line. (Global state: its own test
//! binary.)
#![cfg(feature = "http-proto")]

use std::sync::Mutex;
use std::time::Duration;

use crate::support::fake_collector::{find, Answer, FakeCollector};
use gym_metrics_api::{Group, Role, VerifyTimer};
use gym_metrics_otel::OtelBuilder;

static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Lines;
impl log::Log for Lines {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.target() == "gym_metrics"
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            LINES.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

#[test]
fn the_default_preset_exports_rollouts_but_no_verifications() {
    if gym_testkit::ran_in_child() {
        return;
    }
    log::set_logger(&Lines).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let collector = FakeCollector::start(Answer::Ok);
    let endpoint = collector.endpoint();
    let env = |name: &str| match name {
        "NEMO_GYM_OTEL_ENABLED" => Some("1".to_string()),
        "NEMO_GYM_OTEL_SPAN_GROUPS" => Some("default".to_string()),
        "NEMO_GYM_OTEL_RUN_ID" => Some("run-42".to_string()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("http/protobuf".to_string()),
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some(endpoint.clone()),
        _ => None,
    };
    let guard = OtelBuilder::from_env_lookup(env)
        .unwrap()
        .role(Role::server("math-0", "resources_servers"))
        .install()
        .unwrap();
    let lines = LINES.lock().unwrap().clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("gym.verify.* will not be recorded")
            && lines[0].contains("NEMO_GYM_OTEL_SPAN_GROUPS=\"default\""),
        "{lines:?}"
    );
    assert!(!gym_metrics_api::group_enabled(Group::Verify));

    gym_metrics_api::record_rollout_duration(Duration::from_millis(1200));
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    VerifyTimer::start().finish(true);
    guard.shutdown().unwrap();

    let accepted = collector.wait_accepted(1, Duration::from_secs(10));
    let last = accepted.last().expect("the final export");
    assert!(find(last, "gym.rollout.duration_ms").is_some());
    assert!(find(last, "gym.verify.duration_ms").is_none());
    let resource = last.resource_metrics[0].resource.as_ref().unwrap();
    let attr = |key: &str| {
        resource
            .attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.as_ref())
            .map(|v| format!("{:?}", v.value))
    };
    assert!(attr("nemo.run.id").unwrap().contains("run-42"));
    assert!(attr("service.name").unwrap().contains("nemo-gym/math-0"));
    assert!(attr("nemo.gym.server.type")
        .unwrap()
        .contains("resources_servers"));
    assert!(attr("nemo.gym.service_group").unwrap().contains("nemo-gym"));
}
