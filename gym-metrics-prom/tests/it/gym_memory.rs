//! NeMo Gym's memory profiling on the Prometheus path: an orchestrator with
//! `NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED` serves Gym's memory gauges
//! under the names OpenTelemetry's exporter gives Gym's own (as a Gym
//! orchestrator's reach Prometheus), for the servers it published and the
//! host, and `promtool check metrics` finds nothing in them; a server, an
//! orchestrator without the setting or one silenced by
//! `NEMO_GYM_OTEL_ENABLED=false` serves none.
#![cfg(target_os = "linux")]

use std::process::Command;

use crate::common::exposition::parse;
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_kit::env::GymEnv;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{gym_env, promtool_check_metrics, require, Tool};

const SERVER_FAMILIES: [&str; 3] = [
    "gym_server_memory_usage_bytes",
    "gym_server_memory_sampled_peak_bytes",
    "gym_server_processes",
];
const HOST_FAMILIES: [&str; 4] = [
    "gym_host_memory_usage_bytes",
    "gym_host_memory_available_bytes",
    "gym_host_memory_total_bytes",
    "gym_host_memory_sampled_peak_bytes",
];

const PROFILING: (&str, &str) = ("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "1");

fn profiling() -> GymEnv {
    gym_env(&[PROFILING])
}

/// Profiling on, telemetry off.
fn profiling_silenced() -> GymEnv {
    gym_env(&[PROFILING, ("NEMO_GYM_OTEL_ENABLED", "false")])
}

/// The exposition once `done` holds of its families (within 5 s), else the last one.
fn rendered_when(
    handle: &gym_metrics_prom::PrometheusHandle,
    done: impl Fn(&std::collections::BTreeMap<String, crate::common::exposition::Family>) -> bool,
) -> String {
    let mut text = handle.render();
    for _ in 0..500 {
        if done(&parse(&text)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        text = handle.render();
    }
    text
}

#[test]
fn an_orchestrator_serves_gyms_memory_gauges_for_the_servers_it_launched() {
    let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    let (recorder, handle) = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .gym_env(profiling())
        .build()
        .unwrap();
    let before = parse(&handle.render());
    assert!(HOST_FAMILIES.iter().all(|f| before.contains_key(*f)));
    assert!(SERVER_FAMILIES.iter().all(|f| !before.contains_key(*f)));

    let math = [(Role::server("math-0", "resources_servers"), child.id())];
    recorder.publish_processes(&math);
    // The profiler's thread samples the new list at once.
    let text = rendered_when(&handle, |f| f.contains_key("gym_server_processes"));
    let families = parse(&text);
    for name in SERVER_FAMILIES.iter().chain(&HOST_FAMILIES) {
        let family = families
            .get(*name)
            .unwrap_or_else(|| panic!("{name}:\n{text}"));
        assert_eq!(family.kind, "gauge", "{name}");
    }
    let usage = &families["gym_server_memory_usage_bytes"];
    let types: Vec<&str> = (usage.samples.keys())
        .map(|(_, labels)| labels["memory_type"].as_str())
        .collect();
    assert_eq!(types, ["pss", "rss"], "{usage:?}");
    let pid = child.id().to_string();
    for ((_, labels), value) in &usage.samples {
        assert_eq!(labels["nemo_gym_server_name"], "math-0");
        assert_eq!(labels["nemo_gym_server_type"], "resources_servers");
        assert_eq!(labels["process_pid"], pid);
        assert!(*value > 0.0, "{labels:?}");
    }
    let processes = &families["gym_server_processes"];
    assert_eq!(
        processes.samples.values().copied().collect::<Vec<_>>(),
        [1.0]
    );
    let host = |name: &str| *families[name].samples.values().next().unwrap();
    assert!(host("gym_host_memory_total_bytes") >= host("gym_host_memory_available_bytes"));
    assert!(host("gym_host_memory_sampled_peak_bytes") >= host("gym_host_memory_usage_bytes"));

    // The child gone, its tree reads zero at the next interval and its
    // peak stays, as in Gym.
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = rendered_when(&handle, |f| {
        f["gym_server_processes"]
            .samples
            .values()
            .all(|v| *v == 0.0)
    });
    let gone = parse(&gone);
    let value = |name: &str, t: &str| {
        let family = &gone[name];
        let sample = family
            .samples
            .iter()
            .find(|((_, l), _)| l["memory_type"] == t);
        *sample.unwrap_or_else(|| panic!("{name} {t}: {family:?}")).1
    };
    assert_eq!(value("gym_server_memory_usage_bytes", "rss"), 0.0);
    assert!(value("gym_server_memory_sampled_peak_bytes", "rss") > 0.0);

    require(Tool::Promtool);
    let findings = promtool_check_metrics(&text).unwrap();
    let ours: Vec<&String> = findings.iter().filter(|f| f.contains("gym_")).collect();
    assert!(ours.is_empty(), "{findings:?}");
}

#[test]
fn a_server_or_an_orchestrator_without_the_setting_serves_none() {
    let cases = [
        (Role::server("agent-0", "responses_api_agents"), profiling()),
        (Role::orchestrator(), GymEnv::default()),
        (Role::orchestrator(), profiling_silenced()),
    ];
    for (role, gym) in cases {
        let (recorder, handle) = PrometheusBuilder::new()
            .role(role.clone())
            .gym_env(gym)
            .build()
            .unwrap();
        recorder.publish_processes(&[(Role::server("me", "agent"), std::process::id())]);
        // Time for a profiler's thread to sample, had it one.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let text = handle.render();
        let families = parse(&text);
        let memory = SERVER_FAMILIES.iter().chain(&HOST_FAMILIES);
        assert!(
            memory.into_iter().all(|f| !families.contains_key(*f)),
            "{role}: {text}"
        );
    }
}
