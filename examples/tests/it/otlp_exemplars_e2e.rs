//! End to end, issue 41 §4: the exemplars the otel backend pushes, read by a
//! decoder that is none of ours. The real `gym-fleet` (otel build, 2
//! resources servers, 2 agents, their debug log on, so every rollout's trace
//! id is logged) pushes OTLP/HTTP every 500 ms to a loopback receiver written
//! in Python (the NeMo Gym venv's `http.server` and `opentelemetry.proto`):
//! once as `http/protobuf`, once as `http/json`. Then:
//!
//! - every data point of `gym.rollout.duration_ms` (agents) and
//!   `gym.verify.duration_ms` (resources servers) that has counts carries
//!   exemplars, at most one per bucket, each in a bucket that has counts;
//! - every exemplar's trace id is 16 bytes and one the agents logged, its
//!   span id 8 bytes; a trace's exemplars all name one span (the agent's
//!   rollout span, which the servers' verifications ran under);
//! - in the JSON bodies every `traceId` / `spanId` is lowercase hex of 32 / 16
//!   characters (OTLP/JSON's rule, not protobuf JSON's base64).
#![cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gym_testkit::{require, terminate, TempDir, Tool};
use serde_json::Value;

use crate::support::Fleet;

/// The receiver: `python receiver.py OUT`. Binds a free loopback port,
/// prints it, and answers `POST /v1/metrics`; each body, protobuf or JSON,
/// is decoded by `opentelemetry.proto` into an `ExportMetricsServiceRequest`
/// and written to OUT as one JSON line (a body it cannot decode, as one line
/// with `error`, answered 400). It exits on its own after 120 s.
const RECEIVER: &str = r#"
import base64, gzip, json, os, re, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)

out = open(sys.argv[1], "a")
lock = threading.Lock()
bound = threading.Timer(120, lambda: os._exit(3))
bound.daemon = True
bound.start()
HEX = {"traceId": re.compile(r"[0-9a-f]{32}"), "spanId": re.compile(r"[0-9a-f]{16}")}

def hex_ids_to_base64(value, raw):
    # OTLP/JSON writes trace and span ids as hex; protobuf's JSON mapping
    # (json_format) wants bytes as base64.
    if isinstance(value, dict):
        for key, v in value.items():
            if key in HEX and isinstance(v, str):
                raw.append([key, v])
                if not HEX[key].fullmatch(v):
                    raise ValueError(f"{key} {v!r} is not {HEX[key].pattern}")
                value[key] = base64.b64encode(bytes.fromhex(v)).decode()
            else:
                hex_ids_to_base64(v, raw)
    elif isinstance(value, list):
        for v in value:
            hex_ids_to_base64(v, raw)

def decode(body, content_type):
    request, raw = ExportMetricsServiceRequest(), None
    if content_type == "application/x-protobuf":
        request.ParseFromString(body)
    elif content_type == "application/json":
        raw, parsed = [], json.loads(body)
        hex_ids_to_base64(parsed, raw)
        json_format.ParseDict(parsed, request)
    else:
        raise ValueError(f"content type {content_type!r}")
    return request, raw

def describe(request):
    resources = []
    for rm in request.resource_metrics:
        attrs = {a.key: json_format.MessageToDict(a.value) for a in rm.resource.attributes}
        metrics = []
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                entry = {"name": m.name, "kind": kind}
                if kind in ("histogram", "exponential_histogram"):
                    h = getattr(m, kind)
                    entry["temporality"] = h.aggregation_temporality
                    entry["points"] = [{
                        "count": p.count,
                        "start": p.start_time_unix_nano,
                        "time": p.time_unix_nano,
                        "bucket_counts": list(p.bucket_counts) if kind == "histogram" else None,
                        "bounds": list(p.explicit_bounds) if kind == "histogram" else None,
                        "exemplars": [{
                            "trace_id": e.trace_id.hex(), "trace_len": len(e.trace_id),
                            "span_id": e.span_id.hex(), "span_len": len(e.span_id),
                            "value": e.as_double if e.HasField("as_double") else float(e.as_int),
                            "time": e.time_unix_nano,
                        } for e in p.exemplars],
                    } for p in h.data_points]
                metrics.append(entry)
        resources.append({"attributes": attrs, "metrics": metrics})
    return resources

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        line = {"path": self.path, "content_type": content_type, "bytes": len(body)}
        try:
            request, raw = decode(body, content_type)
            line["resources"] = describe(request)
            if raw is not None:
                line["json_ids"] = raw
            status = 200
        except Exception as e:
            line["error"] = f"{type(e).__name__}: {e}"
            status = 400
        with lock:
            out.write(json.dumps(line) + "\n")
            out.flush()
        if status == 200 and content_type == "application/json":
            answer, answer_type = b"{}", "application/json"
        else:
            answer = ExportMetricsServiceResponse().SerializeToString()
            answer_type = "application/x-protobuf"
        self.send_response(status)
        self.send_header("Content-Type", answer_type)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// The fleet's export interval (ms).
const INTERVAL_MS: &str = "500";
/// How long each fleet runs (s).
const RUN_SECS: &str = "4";
const SERVERS: usize = 2;
const AGENTS: usize = 2;
const ROLLOUT: &str = "gym.rollout.duration_ms";
const VERIFY: &str = "gym.verify.duration_ms";

/// The Python receiver, killed by its pid when dropped.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
    log: PathBuf,
}

impl Receiver {
    fn start(python: &Path, dir: &Path) -> Self {
        let script = dir.join("otlp_receiver.py");
        std::fs::write(&script, RECEIVER).expect("the receiver is written");
        let out = dir.join("exports.jsonl");
        let log = dir.join("receiver.log");
        let stderr = std::fs::File::create(&log).expect("the receiver's log");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(&out)
            .env_clear()
            .env("HOME", dir)
            .env("TMPDIR", dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the Python receiver starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut receiver = Self {
            child,
            port: 0,
            out,
            log,
        };
        let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        receiver.port = line.trim().parse().unwrap_or_else(|_| {
            panic!(
                "the receiver printed no port ({line:?}):\n{}",
                receiver.log_text()
            )
        });
        receiver
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every request it decoded so far, one JSON value each.
    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // SIGTERM to its pid, SIGKILL if it lingers; reaped either way.
        terminate(&mut self.child, Duration::from_secs(2));
    }
}

/// What one run's exports held.
#[derive(Default)]
struct Figures {
    exports: usize,
    points: BTreeMap<&'static str, usize>,
    exemplars: usize,
    json_ids: usize,
    /// Distinct exemplar trace ids, and how many of them both histograms
    /// carried (a rollout's own and its verification's, one span).
    traces: usize,
    shared: usize,
}

/// Per trace id: the span its exemplars name, and the histograms they are on.
type Spans = BTreeMap<String, (String, BTreeSet<&'static str>)>;

/// Runs the fleet for [`RUN_SECS`] pushing `protocol` to `receiver` as
/// `service`; the trace ids its agents logged.
fn run_fleet(receiver: &Receiver, protocol: &str, service: &str) -> BTreeSet<String> {
    let args: Vec<String> = [
        "--servers",
        &SERVERS.to_string(),
        "--agents",
        &AGENTS.to_string(),
        "--seed",
        "41",
        "--generate-ms",
        "20..150",
        "--verify-ms",
        "5..60",
        "--concurrency",
        "4",
        "--drain",
        "1",
        "--duration",
        RUN_SECS,
    ]
    .map(String::from)
    .to_vec();
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol.to_string()),
        ("OTEL_METRIC_EXPORT_INTERVAL", INTERVAL_MS.to_string()),
        ("OTEL_SERVICE_NAME", service.to_string()),
        ("RUST_LOG", "gym_fleet=debug,warn".to_string()),
    ];
    let mut fleet = Fleet::start(&args, &env);
    let (status, output) = fleet.wait(Duration::from_secs(20));
    assert!(status.success(), "{protocol}: {status}\n{output}");
    let logged: BTreeSet<String> = (output.lines())
        .filter_map(|l| {
            l.split_once(" is trace ")
                .map(|(_, id)| id.trim().to_string())
        })
        .collect();
    assert!(
        logged.len() >= 10,
        "{protocol}: the agents logged {} trace ids:\n{output}",
        logged.len()
    );
    logged
}

/// The resource's `service.name`.
fn service_name(resource: &Value) -> &str {
    resource["attributes"]["service.name"]["stringValue"]
        .as_str()
        .unwrap_or_default()
}

/// Checks the requests of one run (those whose processes are `service/…`)
/// against the trace ids its agents logged.
fn check(requests: &[Value], protocol: &str, service: &str, logged: &BTreeSet<String>) -> Figures {
    let content_type = match protocol {
        "http/json" => "application/json",
        _ => "application/x-protobuf",
    };
    let prefix = format!("{service}/");
    let mut figures = Figures::default();
    // The span each trace's exemplars name, and the processes per histogram.
    let mut span_of = Spans::new();
    let mut exporters: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for request in requests {
        let resources = request["resources"].as_array();
        let ours = resources
            .into_iter()
            .flatten()
            .any(|r| service_name(r).starts_with(&prefix));
        if !ours {
            continue;
        }
        figures.exports += 1;
        assert!(request.get("error").is_none(), "{protocol}: {request}");
        assert_eq!(request["path"], "/v1/metrics", "{protocol}");
        assert_eq!(request["content_type"], content_type, "{protocol}");
        let mut exemplars_here = 0;
        for resource in resources.into_iter().flatten() {
            let process = service_name(resource).to_string();
            for metric in resource["metrics"].as_array().into_iter().flatten() {
                let name = match metric["name"].as_str() {
                    Some(ROLLOUT) => ROLLOUT,
                    Some(VERIFY) => VERIFY,
                    _ => continue,
                };
                let what = format!("{protocol} {process} {name}");
                assert_eq!(metric["kind"], "histogram", "{what}: {metric}");
                for point in metric["points"].as_array().into_iter().flatten() {
                    let count = point["count"].as_u64().expect("a count");
                    if count == 0 {
                        continue;
                    }
                    exporters.entry(name).or_default().insert(process.clone());
                    *figures.points.entry(name).or_default() += 1;
                    check_point(point, count, (name, &what), logged, &mut span_of);
                    exemplars_here += point["exemplars"].as_array().map_or(0, Vec::len);
                }
            }
        }
        figures.exemplars += exemplars_here;
        if protocol == "http/json" {
            // Every id in the body was hex of its width (the receiver
            // refuses other ids): one trace and one span id per exemplar
            // of any metric; the gym histograms' are among them.
            let ids = request["json_ids"].as_array().expect("the body's ids");
            for pair in ids {
                let (key, id) = (&pair[0], pair[1].as_str().unwrap_or_default());
                let width = if key == "traceId" { 32 } else { 16 };
                assert!(
                    id.len() == width && id.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{key} {id:?}"
                );
            }
            assert!(ids.len() >= 2 * exemplars_here, "{ids:?}");
            figures.json_ids += ids.len();
        }
    }
    figures.traces = span_of.len();
    figures.shared = span_of.values().filter(|(_, on)| on.len() == 2).count();
    assert!(
        figures.exports >= 4,
        "{protocol}: {} exports from {service}",
        figures.exports
    );
    for (name, processes) in [(ROLLOUT, AGENTS), (VERIFY, SERVERS)] {
        let seen = exporters.get(name).map_or(0, BTreeSet::len);
        assert_eq!(
            seen,
            processes,
            "{protocol}: {name} with counts from {:?}",
            exporters.get(name)
        );
        // Several exports each: at least two points per process.
        let points = figures.points.get(name).copied().unwrap_or(0);
        assert!(
            points >= 2 * processes,
            "{protocol}: {points} {name} points"
        );
    }
    figures
}

/// One histogram point with `count` records: its exemplars.
fn check_point(
    point: &Value,
    count: u64,
    (name, what): (&'static str, &str),
    logged: &BTreeSet<String>,
    span_of: &mut Spans,
) {
    let counts: Vec<u64> = serde_json::from_value(point["bucket_counts"].clone()).unwrap();
    let bounds: Vec<f64> = serde_json::from_value(point["bounds"].clone()).unwrap();
    assert_eq!(counts.iter().sum::<u64>(), count, "{what}: {point}");
    assert_eq!(counts.len(), bounds.len() + 1, "{what}: {point}");
    let exemplars = point["exemplars"].as_array().expect("exemplars");
    assert!(
        !exemplars.is_empty(),
        "{what}: a point of {count} records without exemplars: {point}"
    );
    let mut buckets = BTreeSet::new();
    for e in exemplars {
        assert_eq!(
            (e["trace_len"].as_u64(), e["span_len"].as_u64()),
            (Some(16), Some(8)),
            "{what}: {e}"
        );
        let trace = e["trace_id"].as_str().expect("a trace id");
        let span = e["span_id"].as_str().expect("a span id");
        assert!(
            logged.contains(trace),
            "{what}: exemplar trace {trace} is no rollout the agents logged ({} logged)",
            logged.len()
        );
        assert_ne!(span, "0000000000000000", "{what}: {e}");
        let (named, on) = (span_of.entry(trace.to_string()))
            .or_insert_with(|| (span.to_string(), BTreeSet::new()));
        assert_eq!(named, span, "{what}: trace {trace} names two spans");
        on.insert(name);
        // In a bucket that counted it (OTLP's bucket i is (bounds[i-1],
        // bounds[i]]), one exemplar per bucket, taken within the point's
        // interval (1 ms of slack: its time went through f64 seconds).
        let value = e["value"].as_f64().expect("a value");
        let bucket = bounds
            .iter()
            .position(|&b| value <= b)
            .unwrap_or(bounds.len());
        assert!(
            counts[bucket] > 0,
            "{what}: {e} in an empty bucket: {point}"
        );
        assert!(
            buckets.insert(bucket),
            "{what}: two exemplars in bucket {bucket}"
        );
        let time = e["time"].as_u64().unwrap();
        let (start, at) = (
            point["start"].as_u64().unwrap(),
            point["time"].as_u64().unwrap(),
        );
        let slack = 1_000_000;
        assert!(
            start <= time + slack && time <= at + slack,
            "{what}: exemplar at {time}, point from {start} to {at}"
        );
    }
}

#[test]
fn every_exported_rollout_and_verify_bucket_carries_a_logged_trace_id_in_protobuf_and_json() {
    let started = Instant::now();
    let python = require(Tool::NemoGymPython);
    let dir = TempDir::new("otlp-exemplars").expect("a temp dir");
    let receiver = Receiver::start(&python, dir.path());
    for (protocol, service) in [
        ("http/protobuf", "exemplars-proto"),
        ("http/json", "exemplars-json"),
    ] {
        let logged = run_fleet(&receiver, protocol, service);
        let requests = receiver.requests();
        let errors: Vec<&Value> = requests
            .iter()
            .filter(|r| r.get("error").is_some())
            .collect();
        assert!(
            errors.is_empty(),
            "bodies the receiver could not decode: {errors:?}\n{}",
            receiver.log_text()
        );
        let figures = check(&requests, protocol, service, &logged);
        eprintln!(
            "{protocol}: {} exports, {} rollout and {} verify points with counts, {} exemplars, \
             {} json ids, {} distinct exemplar trace ids all among {} logged ({} on both \
             histograms, one span each)",
            figures.exports,
            figures.points.get(ROLLOUT).copied().unwrap_or(0),
            figures.points.get(VERIFY).copied().unwrap_or(0),
            figures.exemplars,
            figures.json_ids,
            figures.traces,
            logged.len(),
            figures.shared
        );
    }
    drop(receiver);
    eprintln!("done in {:?}", started.elapsed());
}
