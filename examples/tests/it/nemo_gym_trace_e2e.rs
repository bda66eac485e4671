//! e2e: one trace id across languages. A real Python Gym client (the
//! released nemo-gym 0.7.0's own telemetry setup, sampling on, and its own
//! HTTP client, `nemo_gym.server_utils.request`, which sends `traceparent`)
//! calls one of our resources servers (`gym-fleet server`, prom backend)
//! inside Gym's own rollout span (`traced_endpoint(ROLLOUT, "gym.rollout")`).
//! A real Prometheus 2.53 with `exemplar-storage` scrapes our server; the
//! exemplars it stores on our verify histogram carry exactly the trace ids
//! of the Python rollouts. Python exports its spans to the console (lens'
//! console exporter), so no trace backend runs.
#![cfg(feature = "prom")]

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::{Duration, Instant};

use gym_testkit::{require, scrape_config, Prometheus, TempDir, Tool};
use serde_json::Value;

use crate::resources_server::ResourcesServer;
use crate::support::gym_python::{driver, script};

/// `URL ROLLOUTS OUT`: Gym's telemetry set up as its orchestrator would set
/// it (span groups `default`: rollout and http_client), then each rollout a
/// `POST URL` through Gym's HTTP client inside Gym's rollout span (3
/// connection retries, 10 s per request); writes one JSON line per rollout,
/// with its trace id, to the file OUT (stdout carries the spans).
const CALLER: &str = r#"
import asyncio, json, sys

from nemo_gym.telemetry import TelemetryConfig, configure_telemetry_env, init_telemetry, shutdown_telemetry

url, rollouts, out = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "w")
configure_telemetry_env(TelemetryConfig(
    enabled=True, exporter="console", span_groups="default", run_id="trace-e2e", metrics_enabled=False))
handle = init_telemetry(server_name="python_agent", server_type="responses_api_agents")
if handle is None or not handle.is_exporting:
    sys.exit("Gym's telemetry is off")

from opentelemetry import trace
from aiohttp import ClientTimeout
from nemo_gym.server_utils import GlobalAIOHTTPAsyncClientConfig, request, set_global_aiohttp_client
from nemo_gym.telemetry.endpoints import traced_endpoint
from nemo_gym.telemetry.span_groups import GymSpanGroup

async def rollout(task_id):
    span = trace.get_current_span().get_span_context()
    response = await request("POST", url, json={"task_id": task_id, "answer": "42"},
                             _max_connection_retries=3, timeout=ClientTimeout(total=10))
    line = {"trace_id": format(span.trace_id, "032x"), "sampled": bool(span.trace_flags.sampled),
            "status": response.status}
    out.write(json.dumps(line) + "\n")
    out.flush()

async def main():
    set_global_aiohttp_client(GlobalAIOHTTPAsyncClientConfig())
    traced = traced_endpoint(GymSpanGroup.ROLLOUT, "gym.rollout", rollout)
    for task_id in range(rollouts):
        await traced(task_id)

asyncio.run(main())
out.close()
shutdown_telemetry()
"#;

/// Rollouts the Python client makes.
const ROLLOUTS: usize = 5;
/// How long the Python client may take (importing Gym takes a few seconds).
const CALLER_DEADLINE: Duration = Duration::from_secs(90);

#[test]
fn a_python_gym_rollouts_trace_id_is_the_exemplar_on_our_verify_histogram() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let python = require(Tool::NemoGymPython);
    require(Tool::Prometheus);
    let server = ResourcesServer::start();
    let metrics = server.metrics.expect("a prom build serves /metrics");
    let config = scrape_config(&[metrics.to_string()], Duration::from_secs(1));
    let prometheus = Prometheus::start_with_features(&config, &["exemplar-storage"]).unwrap();

    let dir = TempDir::new("gym-trace-e2e").expect("a temp dir");
    let path = dir.path().join("gym_caller.py");
    std::fs::write(&path, script(CALLER)).expect("the caller is written");
    let url = format!("http://{}/verify", server.verify);
    let lines = dir.path().join("rollouts.jsonl");
    let env = BTreeMap::from([("HOME".to_string(), dir.path().display().to_string())]);
    let args = [
        url.as_str(),
        &ROLLOUTS.to_string(),
        &lines.display().to_string(),
    ];
    // Its output goes to files: a pipe nobody reads while we wait could fill.
    let log = dir.path().join("caller.log");
    let stderr = std::fs::File::create(&log).expect("the caller's log");
    let mut caller = driver(&python, &path, &args, &env)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("the Gym caller starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = caller.try_wait().expect("the Gym caller is waited for") {
            break status;
        }
        if started.elapsed() > CALLER_DEADLINE {
            let _ = caller.kill();
            let _ = caller.wait();
            panic!("the Gym caller took more than {CALLER_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "{status}\n{stderr}");
    let text = std::fs::read_to_string(&lines).expect("the caller wrote its rollouts");
    let rollouts: Vec<Value> = (text.lines())
        .map(|l| serde_json::from_str(l).expect("a rollout line"))
        .collect();
    assert_eq!(rollouts.len(), ROLLOUTS, "{text}");
    for r in &rollouts {
        assert_eq!(
            (&r["sampled"], &r["status"]),
            (&true.into(), &200.into()),
            "{r}"
        );
    }
    let python_traces: BTreeSet<String> = rollouts
        .iter()
        .map(|r| r["trace_id"].as_str().expect("a trace id").to_string())
        .collect();
    assert_eq!(python_traces.len(), ROLLOUTS, "one trace per rollout");

    // Every verification was made in one of those traces: each exemplar
    // Prometheus stores on the verify histogram is a Python rollout's, and
    // the newest (all fall in one bucket) is the last rollout's.
    let last = rollouts[ROLLOUTS - 1]["trace_id"]
        .as_str()
        .unwrap_or_default();
    let verify = r#"{__name__=~"gym_verify_duration_ms_milliseconds(_bucket)?"}"#;
    let mut stored = Vec::new();
    for _ in 0..60 {
        stored = prometheus.exemplar_trace_ids(verify).unwrap();
        if stored.iter().any(|id| id == last) {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        stored.iter().any(|id| id == last),
        "{stored:?} lacks {last}\n{}",
        prometheus.log_tail()
    );
    for id in &stored {
        assert!(
            python_traces.contains(id),
            "{id} is no Python rollout's: {python_traces:?}"
        );
    }
}
