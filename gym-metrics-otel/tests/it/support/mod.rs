//! Shared by the integration tests: the reference sequence, an in-memory
//! writer, readers of OTLP/JSON, a fake collector and a counting logger.
#![allow(dead_code)]

pub mod counting_logger;
pub mod fake_collector;
pub mod tcp_proxy;
pub mod tls;
pub mod victoria;

use std::io::Write;
use std::sync::{Arc, Mutex};

use gym_metrics_api::backend::{Boundaries, Recorder};

/// Rollout durations of the reference sequence, in ms.
pub const ROLLOUTS_MS: [f64; 3] = [120.0, 3400.0, 45000.0];
/// Verifications of the reference sequence: (ms, succeeded).
pub const VERIFIES: [(f64, bool); 4] =
    [(40.0, true), (250.0, true), (1200.0, true), (8000.0, false)];
/// Fleet size the orchestrator reports.
pub const FLEET_SIZE: u64 = 4;

/// Builds an orchestrator's and a server's recorder from `builder`, records
/// the reference sequence through each, and shuts both down: their final
/// exports carry everything.
pub fn record_as_orchestrator_and_server(
    builder: impl Fn(gym_metrics_api::Role) -> gym_metrics_otel::OtelBuilder,
) {
    use gym_metrics_api::Role;
    let start = |role: Role| builder(role).build().unwrap();
    let (orchestrator, orchestrator_guard) = start(Role::orchestrator());
    let (server, server_guard) = start(Role::server("math-0", "resources"));
    record_reference_sequence(&orchestrator);
    record_reference_sequence(&server);
    orchestrator_guard.shutdown().unwrap();
    server_guard.shutdown().unwrap();
}

/// Records the reference sequence (fleet size only if `recorder` is the orchestrator).
pub fn record_reference_sequence(recorder: &dyn Recorder) {
    for ms in ROLLOUTS_MS {
        recorder.record_rollout_duration_ms(ms);
    }
    for (ms, ok) in VERIFIES {
        recorder.record_verify_ms(ms, ok);
    }
    if recorder.role().writes_fleet_size() {
        recorder.record_active_servers(FLEET_SIZE);
    }
}

/// Expected per-bucket (non-cumulative) counts of `values` against the
/// catalogue boundaries, including the +Inf bucket, computed independently
/// of the backend.
pub fn expected_bucket_counts(values: &[f64]) -> Vec<u64> {
    let b = Boundaries::default_duration_ms();
    let mut counts = vec![0u64; b.as_slice().len() + 1];
    for v in values {
        let i = b
            .as_slice()
            .iter()
            .position(|&bound| *v <= bound)
            .unwrap_or(b.as_slice().len());
        counts[i] += 1;
    }
    counts
}

pub fn rollout_values() -> Vec<f64> {
    ROLLOUTS_MS.to_vec()
}

pub fn verify_values() -> Vec<f64> {
    VERIFIES.iter().map(|(ms, _)| *ms).collect()
}

/// A `Write` into shared memory.
#[derive(Clone, Default)]
pub struct SharedBuf(pub Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reading OTLP/JSON (`ExportMetricsServiceRequest` as serialised by
/// opentelemetry-proto: 64-bit integers as strings).
pub mod otlp_json {
    use serde_json::Value;

    /// A JSON integer or integer string.
    pub fn u64_of(v: &Value) -> u64 {
        match v {
            Value::String(s) => s.parse().unwrap(),
            Value::Number(n) => n.as_u64().unwrap(),
            other => panic!("not an integer: {other}"),
        }
    }

    /// Every metric object of every scope.
    pub fn metrics(doc: &Value) -> Vec<&Value> {
        doc["resourceMetrics"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|rm| rm["scopeMetrics"].as_array().unwrap())
            .flat_map(|sm| sm["metrics"].as_array().unwrap())
            .collect()
    }

    /// The metric called `name`, if exported.
    pub fn metric<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
        metrics(doc).into_iter().find(|m| m["name"] == name)
    }

    /// The single data point of `name` under `kind` (`histogram`, `sum`, `gauge`, ...).
    pub fn point<'a>(doc: &'a Value, name: &str, kind: &str) -> &'a Value {
        let m = metric(doc, name).unwrap_or_else(|| panic!("{name} not exported"));
        let points = m[kind]["dataPoints"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} is not a {kind}: {m}"));
        assert_eq!(points.len(), 1, "{name}: {m}");
        &points[0]
    }

    /// A resource attribute's string value.
    pub fn resource_attribute(doc: &Value, key: &str) -> Option<String> {
        doc["resourceMetrics"][0]["resource"]["attributes"]
            .as_array()?
            .iter()
            .find(|a| a["key"] == key)
            .and_then(|a| a["value"]["stringValue"].as_str().map(str::to_string))
    }
}

/// Median cost of one record call (a rollout and a verify), in nanoseconds,
/// over `rounds` batches of `per_batch`.
pub fn record_cost_ns(recorder: &dyn Recorder, rounds: usize, per_batch: usize) -> f64 {
    let mut costs: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = std::time::Instant::now();
            for i in 0..per_batch {
                recorder.record_rollout_duration_ms(100.0 + i as f64);
                recorder.record_verify_ms(50.0, i % 2 == 0);
            }
            start.elapsed().as_nanos() as f64 / per_batch as f64
        })
        .collect();
    costs.sort_by(f64::total_cmp);
    costs[costs.len() / 2]
}

/// Resident set size of this process, in bytes (Linux).
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// The pipeline the fault tests run: an orchestrator exporting to `endpoint`
/// every 100 ms with a 500 ms export timeout and the given shutdown deadline.
pub fn fault_pipeline(
    endpoint: impl Into<String>,
    deadline: std::time::Duration,
) -> (gym_metrics_otel::OtelRecorder, gym_metrics_otel::OtelGuard) {
    gym_metrics_otel::OtelBuilder::new()
        .role(gym_metrics_api::Role::orchestrator())
        .endpoint(endpoint)
        .export_interval(std::time::Duration::from_millis(100))
        .export_timeout(std::time::Duration::from_millis(500))
        .shutdown_timeout(deadline)
        .build()
        .expect("a valid fault-test pipeline")
}
