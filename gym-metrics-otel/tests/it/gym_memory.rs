//! NeMo Gym's memory profiling on the OpenTelemetry path: an orchestrator
//! with `NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED` exports Gym's memory
//! gauges under Gym's names, units and attributes (`process.pid` an
//! integer, as Gym's), for the servers it published and the host; a server
//! exports none.
#![cfg(target_os = "linux")]

use std::process::Command;

use crate::support::otlp_json::*;
use crate::support::*;
use gym_metrics_api::backend::{Instrument, Recorder};
use gym_metrics_api::Role;
use gym_metrics_kit::env::GymEnv;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use serde_json::Value;

fn profiling() -> GymEnv {
    GymEnv::read(|n| (n == "NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED").then(|| "1".to_string()))
        .unwrap()
}

/// The last export's document after a flush.
fn export(role: Role, publish: &[(Role, u32)]) -> Value {
    let buf = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .role(role)
        .gym_env(profiling())
        .build()
        .unwrap();
    recorder.publish_processes(publish);
    guard.force_flush().unwrap();
    let text = buf.text();
    let doc = serde_json::from_str(text.lines().last().expect("an export")).unwrap();
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
    let doc = export(Role::orchestrator(), &[(server, child.id())]);
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
    let got: Vec<Vec<String>> = points.iter().map(attributes).collect();
    assert_eq!(got, [server("rss"), server("pss")], "{usage}");
    let processes = point(&doc, "gym.server.processes", "gauge");
    assert_eq!(processes["asInt"], "1", "{processes}");
    let total = point(&doc, "gym.host.memory.total", "gauge");
    assert!(attributes(total).is_empty());
}

#[test]
fn a_server_exports_none() {
    let me = (Role::server("me", "agent"), std::process::id());
    let doc = export(Role::server("agent-0", "responses_api_agents"), &[me]);
    for instrument in Instrument::GYM_MEMORY {
        assert!(
            metric(&doc, instrument.name).is_none(),
            "{}",
            instrument.name
        );
    }
}
