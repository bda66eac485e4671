//! NeMo Gym's memory profiling on the OpenTelemetry path: an orchestrator
//! with `NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED` exports Gym's memory
//! gauges under Gym's names, units and attributes (`process.pid` an
//! integer, as Gym's), for the servers it published and the host; a
//! server, an orchestrator without the setting, one silenced by
//! `NEMO_GYM_OTEL_ENABLED=false` or one exporting nothing, exports none.
#![cfg(target_os = "linux")]

use std::process::Command;

use crate::support::otlp_json::*;
use crate::support::*;
use gym_metrics_api::backend::{Instrument, Recorder};
use gym_metrics_api::Role;
use gym_metrics_kit::env::GymEnv;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use gym_testkit::gym_env;
use serde_json::Value;

const PROFILING: (&str, &str) = ("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "1");

fn profiling() -> GymEnv {
    gym_env(&[PROFILING])
}

/// Profiling on, telemetry off.
fn profiling_silenced() -> GymEnv {
    gym_env(&[PROFILING, ("NEMO_GYM_OTEL_ENABLED", "false")])
}

/// The first export, within 5 s, in which `gym.server.processes` shows
/// every server of `publish` (the profiler's thread samples them), else
/// the last one; where no profiler is expected, one export 100 ms after
/// the publication.
fn export(role: Role, gym: GymEnv, publish: &[(Role, u32)]) -> Value {
    let tries = if gym.memory_profiling(&role).is_some() {
        50
    } else {
        1
    };
    let buf = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .role(role)
        .gym_env(gym)
        .build()
        .unwrap();
    recorder.publish_processes(publish);
    let mut doc = Value::Null;
    for _ in 0..tries {
        std::thread::sleep(std::time::Duration::from_millis(100));
        guard.force_flush().unwrap();
        let text = buf.text();
        doc = serde_json::from_str(text.lines().last().expect("an export")).unwrap();
        let points = metric(&doc, "gym.server.processes").map(|m| &m["gauge"]["dataPoints"]);
        if points
            .and_then(Value::as_array)
            .is_some_and(|p| p.len() == publish.len())
        {
            break;
        }
    }
    guard.shutdown().unwrap();
    doc
}

/// A point's attributes as `key=value` strings, the value's OTLP type kept.
fn attributes(point: &Value) -> Vec<String> {
    let mut pairs: Vec<String> = (point["attributes"].as_array().unwrap().iter())
        .map(|a| format!("{}={}", a["key"].as_str().unwrap(), a["value"]))
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn an_orchestrator_exports_gyms_memory_gauges_for_the_servers_it_launched() {
    let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    let server = Role::server("math-0", "resources_servers");
    let doc = export(Role::orchestrator(), profiling(), &[(server, child.id())]);
    child.kill().unwrap();
    child.wait().unwrap();
    for instrument in Instrument::GYM_MEMORY {
        let m =
            metric(&doc, instrument.name).unwrap_or_else(|| panic!("{}: {doc}", instrument.name));
        assert_eq!(m["unit"], instrument.unit.unwrap(), "{m}");
        assert_eq!(m["description"], instrument.description, "{m}");
        assert!(m["gauge"].is_object(), "{m}");
    }
    let usage = metric(&doc, "gym.server.memory.usage").unwrap();
    let points = usage["gauge"]["dataPoints"].as_array().unwrap();
    let server = |t: &str| {
        let pid = format!("process.pid={{\"intValue\":\"{}\"}}", child.id());
        vec![
            format!("memory.type={{\"stringValue\":\"{t}\"}}"),
            "nemo.gym.server.name={\"stringValue\":\"math-0\"}".to_string(),
            "nemo.gym.server.type={\"stringValue\":\"resources_servers\"}".to_string(),
            pid,
        ]
    };
    // The SDK's order of data points is its hash map's: compare as sets.
    let mut got: Vec<Vec<String>> = points.iter().map(attributes).collect();
    got.sort();
    assert_eq!(got, [server("pss"), server("rss")], "{usage}");
    let processes = point(&doc, "gym.server.processes", "gauge");
    assert_eq!(processes["asInt"], "1", "{processes}");
    let total = point(&doc, "gym.host.memory.total", "gauge");
    assert!(attributes(total).is_empty());
}

#[test]
fn a_server_or_an_orchestrator_without_the_setting_or_an_exporter_exports_none() {
    // Alone in its process: it looks for a profiler's thread by name.
    if gym_testkit::ran_in_child() {
        return;
    }
    let me = [(Role::server("me", "agent"), std::process::id())];
    let agent = Role::server("agent-0", "responses_api_agents");
    for (role, gym) in [
        (agent, profiling()),
        (Role::orchestrator(), GymEnv::default()),
        (Role::orchestrator(), profiling_silenced()),
    ] {
        let doc = export(role.clone(), gym, &me);
        for instrument in Instrument::GYM_MEMORY {
            assert!(
                metric(&doc, instrument.name).is_none(),
                "{role}: {}",
                instrument.name
            );
        }
    }
    // Exporter `none`: Gym's orchestrator profiles only while it exports.
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::None)
        .role(Role::orchestrator())
        .gym_env(profiling())
        .build()
        .unwrap();
    recorder.publish_processes(&me);
    // A new thread names itself once it runs.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let threads = std::fs::read_dir("/proc/self/task").unwrap().flatten();
    let names: Vec<String> = threads
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .collect();
    assert!(
        !names.iter().any(|n| n.trim() == "gym-metrics-mem"),
        "a profiler's thread: {names:?}"
    );
    guard.shutdown().unwrap();
}

#[test]
fn the_final_export_reads_a_last_sample_taken_at_shutdown() {
    let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    // An hour between samples: only the last one, at shutdown, sees it gone.
    let hourly = ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "3600");
    let buf = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .role(Role::orchestrator())
        .gym_env(gym_env(&[PROFILING, hourly]))
        .build()
        .unwrap();
    recorder.publish_processes(&[(Role::server("math-0", "resources_servers"), child.id())]);
    let processes = |buf: &SharedBuf| {
        let text = buf.text();
        let doc: Value = serde_json::from_str(text.lines().last().expect("an export")).unwrap();
        point(&doc, "gym.server.processes", "gauge")["asInt"].clone()
    };
    let sampled = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        guard.force_flush().unwrap();
        processes(&buf) == "1"
    });
    assert!(sampled, "the published child was never sampled");
    child.kill().unwrap();
    child.wait().unwrap();
    guard.shutdown().unwrap();
    assert_eq!(processes(&buf), "0");
}
