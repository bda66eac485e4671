//! Our fleet inside a real NeMo Gym environment, beside a real Python Gym
//! process, both pushing OTLP into one VictoriaMetrics.
//!
//! The Python side is the released `nemo-gym` 0.7.0 over `nemo-lens` 0.1.0,
//! from PyPI, in the venv `cargo xtask tools` provisions (`nemo-gym-python`).
//! Its driver (the `DRIVER` text below: no Python lives in our crates) calls
//! Gym's own `configure_telemetry_env` to produce the environment Gym hands its
//! children; our `gym-fleet` (orchestrator, a resources server, an agent) is
//! started with exactly that environment, and a Python process records
//! through `nemo_gym.telemetry.metrics` into the same VictoriaMetrics. Then,
//! by PromQL:
//! - both sides' gym series have the same names and types, and carry Gym's
//!   resource keys with the run id, and every process has its own `instance`;
//! - every recording rule of `deploy/prometheus/rules.yml` (expanded to raw
//!   series) and every panel query of `deploy/grafana/gym-fleet.json`
//!   returns data for each process that exports what it reads; every alert
//!   runs;
//! - with `NEMO_GYM_OTEL_ENABLED=false` a fleet exports nothing, and with
//!   `NEMO_GYM_OTEL_SPAN_GROUPS=default` it records rollouts but no
//!   verifications, and says why.
//! - with Gym's memory profiling on, our orchestrator's memory gauges and
//!   those of Gym's own orchestrator code answer one query;
//! - our agents call a real Gym FastAPI resources server, and every HTTP
//!   panel answers for it (the old HTTP metric) and for ours (the stable one).
//!
//! The driver starts with the workarounds the released packages need
//! (`support/gym_python.rs`).
//!
//! VictoriaMetrics gets the kit's `deploy/victoriametrics/otlp-relabel.yml`,
//! which gives OTLP series the `job` (the fleet) and `instance` (the
//! process) every rule groups by.
#![cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use gym_testkit::{require, Sample, TempDir, Tool, VictoriaMetrics};
use serde_json::Value;

use crate::support::gym_python::{self, driver};
use crate::support::{deploy_file, fast_fleet_args, panel_queries, Fleet};

/// The Python driver (after [`gym_python::PRELUDE`]): `configure ENDPOINT
/// RUN_ID SPAN_GROUPS MEMORY` prints the environment Gym's
/// `configure_telemetry_env` leaves (as JSON), memory profiling on when
/// MEMORY is `memory`; `serve NAME SECONDS` records as one Gym resources
/// server; `orchestrate NAME PID SECONDS` does what Gym's orchestrator does
/// for memory (`cli/env.py`): its telemetry, then Gym's memory profiler over
/// the server NAME it launched as PID; `fastapi NAME PORT` runs a real Gym
/// resources server (the `example_single_tool_call` environment Gym ships)
/// as Gym starts its servers: `run_webserver`, which sets up Gym's
/// telemetry, instruments the FastAPI app and serves it with uvicorn, given
/// the configuration Gym's orchestrator hands a server (its config dict and
/// its name).
const DRIVER: &str = r#"
import json, os, sys, time

from nemo_gym.telemetry import TelemetryConfig, configure_telemetry_env, init_telemetry, shutdown_telemetry
from nemo_gym.telemetry import MemoryProfilingConfig, memory_profiling_config_from_env
from nemo_gym.telemetry import metrics

if sys.argv[1] == "configure":
    endpoint, run_id, span_groups, memory = sys.argv[2:6]
    got = configure_telemetry_env(TelemetryConfig(
        enabled=True, exporter="otlp", otlp_endpoint=endpoint, otlp_protocol="http/protobuf",
        span_groups=span_groups, run_id=run_id,
        memory_profiling=MemoryProfilingConfig(enabled=(memory == "memory"), interval_seconds=1.0)))
    print(json.dumps({"run_id": got, "environ": dict(os.environ)}))
elif sys.argv[1] == "fastapi":
    name, port = sys.argv[2], int(sys.argv[3])
    os.environ["NEMO_GYM_CONFIG_DICT"] = json.dumps({
        "dry_run": False,
        "head_server": {"host": "127.0.0.1", "port": 1},  # not contacted by /verify
        name: {"resources_servers": {"example_single_tool_call": {
            "entrypoint": "app.py", "domain": "agent", "host": "127.0.0.1", "port": port}}},
    })
    os.environ["NEMO_GYM_CONFIG_PATH"] = name
    from resources_servers.example_single_tool_call.app import SimpleWeatherResourcesServer
    SimpleWeatherResourcesServer.run_webserver()
elif sys.argv[1] == "orchestrate":
    from nemo_gym.telemetry.memory import MemoryProfiler, ServerMemoryTarget
    name, pid, seconds = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    handle = init_telemetry(server_name="orchestrator", server_type="orchestrator")
    config = memory_profiling_config_from_env(MemoryProfilingConfig())
    if handle is None or not handle.is_exporting or not config.enabled:
        sys.exit("Gym's telemetry or memory profiling is off")
    profiler = MemoryProfiler(
        [ServerMemoryTarget(name=name, server_type="resources_servers", pid=pid)],
        interval_seconds=config.interval_seconds)
    profiler.start()
    print("profiling", flush=True)
    time.sleep(seconds)
    profiler.stop()
    shutdown_telemetry()
elif sys.argv[1] == "serve":
    name, seconds = sys.argv[2], float(sys.argv[3])
    handle = init_telemetry(server_name=name, server_type="resources_servers")
    if handle is None or not handle.is_exporting:
        sys.exit("Gym's telemetry is off")
    print("recording", flush=True)
    end, i = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        metrics.record_rollout_duration(300.0 + 7.0 * (i % 50))
        metrics.record_verify(40.0 + (i % 7), succeeded=(i % 4 != 0))
        i += 1
        time.sleep(0.05)
    shutdown_telemetry()
    print(f"recorded {i}", flush=True)
"#;

/// The run id the driver hands Gym's configuration.
const RUN_ID: &str = "e2e-run-1";
/// The fleet: Gym's default `OTEL_SERVICE_NAME`, hence the service group and `job`.
const FLEET: &str = "nemo-gym";
/// The Python process's server name.
const PYTHON_SERVER: &str = "python_resources";

/// The Gym venv's interpreter and the driver written where it can run.
struct Gym {
    python: PathBuf,
    script: PathBuf,
    _dir: TempDir,
}

impl Gym {
    /// `None` (the test skips, or fails in CI) without the Gym venv or VictoriaMetrics.
    fn set_up() -> Self {
        let python = require(Tool::NemoGymPython);
        require(Tool::VictoriaMetrics);
        let dir = TempDir::new("nemo-gym-e2e").expect("a temp dir");
        let script = dir.path().join("gym_driver.py");
        std::fs::write(&script, gym_python::script(DRIVER)).expect("the driver is written");
        Self {
            python,
            script,
            _dir: dir,
        }
    }
}

/// A VictoriaMetrics given the kit's `deploy/victoriametrics/otlp-relabel.yml`.
fn relabelled_victoria_metrics() -> VictoriaMetrics {
    let relabel = deploy_file(&["victoriametrics", "otlp-relabel.yml"]);
    VictoriaMetrics::start_with_flags(&[format!("-relabelConfig={}", relabel.display())])
        .expect("victoria-metrics starts")
}

impl Gym {
    /// The driver running `args` in `env`, its output discarded.
    fn spawn(&self, args: &[&str], env: &BTreeMap<String, String>) -> Killed {
        let mut command = driver(&self.python, &self.script, args, env);
        let child = (command.stdout(Stdio::null()).stderr(Stdio::null()).spawn())
            .unwrap_or_else(|e| panic!("the Gym driver ({args:?}) starts: {e}"));
        Killed(child)
    }
}

/// A child process killed (by its PID) and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The environment Gym's orchestrator hands its children, from Gym's own
/// `configure_telemetry_env`, starting from a bare environment.
fn gym_environment(
    gym: &Gym,
    vm: &VictoriaMetrics,
    span_groups: &str,
    memory: bool,
) -> BTreeMap<String, String> {
    let mut bare = BTreeMap::new();
    for key in ["PATH", "HOME"] {
        if let Ok(v) = std::env::var(key) {
            bare.insert(key.to_string(), v);
        }
    }
    // Gym leaves the interval to OTEL_*: one export a second.
    bare.insert("OTEL_METRIC_EXPORT_INTERVAL".into(), "1000".into());
    let endpoint = format!("{}/opentelemetry", vm.url());
    let out = driver(
        &gym.python,
        &gym.script,
        &[
            "configure",
            &endpoint,
            RUN_ID,
            span_groups,
            if memory { "memory" } else { "-" },
        ],
        &bare,
    )
    .output()
    .expect("the Gym driver runs");
    assert!(
        out.status.success(),
        "configure_telemetry_env failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("the driver prints JSON");
    assert_eq!(v["run_id"], RUN_ID, "Gym keeps the configured run id");
    let env: BTreeMap<String, String> = v["environ"]
        .as_object()
        .expect("an environment")
        .iter()
        .filter(|(k, _)| *k != "TMPDIR") // the driver's own, not Gym's
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    // What Gym wrote, so a change of Gym's shows here first.
    for (key, value) in [
        ("NEMO_GYM_OTEL_ENABLED", "1"),
        ("NEMO_GYM_OTEL_EXPORTER", "otlp"),
        ("NEMO_GYM_OTEL_RUN_ID", RUN_ID),
        ("NEMO_GYM_OTEL_SPAN_GROUPS", span_groups),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_SERVICE_NAME", FLEET),
        (
            "NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED",
            if memory { "1" } else { "0" },
        ),
        ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "1.0"),
    ] {
        assert_eq!(
            env.get(key).map(String::as_str),
            Some(value),
            "{key}: {env:?}"
        );
    }
    env
}

/// Our fleet (orchestrator, one resources server, one agent) in `env` alone.
fn start_fleet(env: &BTreeMap<String, String>, seconds: u32) -> Fleet {
    start_fleet_with(env, seconds, &[])
}

/// [`start_fleet`] with `extra` arguments.
fn start_fleet_with(env: &BTreeMap<String, String>, seconds: u32, extra: &[String]) -> Fleet {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gym-fleet"));
    cmd.env_clear().envs(env);
    let mut args = fast_fleet_args(1, 1, 0.75);
    args.extend(["--duration".to_string(), seconds.to_string()]);
    args.extend_from_slice(extra);
    Fleet::start_command(cmd, &args, &[])
}

/// What a failed wait shows: the fleet's output and VictoriaMetrics' log.
fn context(fleet: &Fleet, vm: &VictoriaMetrics) -> String {
    let (fleet, vm) = (fleet.output(), vm.log_tail());
    format!("fleet:\n{fleet}\nvictoria-metrics:\n{vm}")
}

fn names(samples: &[Sample]) -> BTreeSet<String> {
    samples
        .iter()
        .filter_map(|s| s.labels.get("__name__").cloned())
        .collect()
}

/// The gym, HTTP, process and fleet series of the process at `instance` that have recorded
/// something (a value above 0), by name: our processes export the verify
/// counters from the start, at 0, where they verified nothing.
fn exported(vm: &VictoriaMetrics, instance: &str) -> BTreeSet<String> {
    names(
        &vm.query(&format!(
            "{{__name__=~\"gym_.*|http_server_.*|process_.*|fleet_.*\", instance=\"{instance}\"}} > 0"
        ))
        .unwrap_or_else(|e| panic!("{e}")),
    )
}

/// The raw series names an expression reads.
fn reads(expr: &str) -> BTreeSet<String> {
    reads_tokens(expr)
        .into_iter()
        .filter(|t| {
            t.starts_with("gym_")
                || t.starts_with("http_server_")
                || t.starts_with("process_")
                || t.starts_with("fleet_")
                || t == "target_info"
                || t == "up"
        })
        .collect()
}

/// Whether `expr` holds a Grafana variable (`$job`, `${job}`, `$__rate_interval`),
/// quoted or not; `label_replace`'s `$1` is none.
fn has_variable(expr: &str) -> bool {
    let bytes = expr.as_bytes();
    (bytes.windows(2))
        .any(|w| w[0] == b'$' && (w[1] == b'{' || w[1] == b'_' || w[1].is_ascii_alphabetic()))
}

/// `expr` with its quoted strings (label values) left out.
fn unquoted(expr: &str) -> String {
    let mut unquoted = String::new();
    let mut rest = expr;
    while let Some(i) = rest.find('"') {
        unquoted.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        rest = rest.find('"').map_or("", |j| &rest[j + 1..]);
    }
    unquoted.push_str(rest);
    unquoted
}

/// The words of an expression outside its quoted strings.
fn reads_tokens(expr: &str) -> BTreeSet<String> {
    unquoted(expr)
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// One rule of the rules file.
struct Rule {
    /// `record` or `alert` name.
    name: String,
    alert: bool,
    expr: String,
    labels: BTreeMap<String, String>,
}

fn rules() -> Vec<Rule> {
    let path = deploy_file(&["prometheus", "rules.yml"]);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value =
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rules = Vec::new();
    for group in doc["groups"].as_array().expect("groups") {
        for r in group["rules"].as_array().expect("rules") {
            let (name, alert) = match (r["record"].as_str(), r["alert"].as_str()) {
                (Some(n), _) => (n, false),
                (_, Some(n)) => (n, true),
                _ => panic!("a rule without record or alert: {r}"),
            };
            let labels = r["labels"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect();
            rules.push(Rule {
                name: name.to_string(),
                alert,
                expr: r["expr"].as_str().expect("expr").trim().to_string(),
                labels,
            });
        }
    }
    rules
}

/// Replaces every whole-token `name` in `expr` by `(replacement)`.
fn replace_token(expr: &str, name: &str, replacement: &str) -> String {
    let is_token = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = String::new();
    let mut rest = expr;
    while let Some(i) = rest.find(name) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + name.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(is_token) || after.is_some_and(is_token) {
            out.push_str(name);
        } else {
            out.push('(');
            out.push_str(replacement);
            out.push(')');
        }
        rest = &rest[i + name.len()..];
    }
    out.push_str(rest);
    out
}

/// `expr` with every recording rule it reads replaced by that rule's own
/// expression, down to raw series (VictoriaMetrics runs no rules here). A
/// name recorded by several rules is read with the one label that tells
/// them apart (`name{quantile="0.95"}`).
fn expand(expr: &str, rules: &[Rule]) -> String {
    let mut expr = expr.to_string();
    for _ in 0..8 {
        let before = expr.clone();
        for r in rules.iter().filter(|r| !r.alert) {
            let same_name = rules
                .iter()
                .filter(|o| !o.alert && o.name == r.name)
                .count();
            if same_name == 1 {
                expr = replace_token(&expr, &r.name, &r.expr);
            } else if let Some((k, v)) = r.labels.iter().next() {
                expr = expr.replace(
                    &format!("{}{{{k}=\"{v}\"}}", r.name),
                    &format!("({})", r.expr),
                );
            }
        }
        if expr == before {
            return expr;
        }
    }
    panic!("recording rules nest deeper than 8: {expr}");
}

#[test]
fn our_fleet_and_a_python_gym_server_are_one_fleet_in_victoria_metrics() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let gym = Gym::set_up();
    let vm = relabelled_victoria_metrics();

    let env = gym_environment(&gym, &vm, "per_rollout", false);
    let fleet = start_fleet(&env, 40);
    let py = gym.spawn(&["serve", PYTHON_SERVER, "40"], &env);

    // Four processes: our orchestrator, server and agent, and Gym's Python server,
    // each with its own instance, once each has exported a few times.
    let by_instance = "count by (instance, service_name) ({__name__=~\"gym_.*\"})";
    let seen = vm
        .wait_for(by_instance, Duration::from_secs(30), |s| s.len() == 4)
        .unwrap_or_else(|e| panic!("{e}\n{}", context(&fleet, &vm)));
    std::thread::sleep(Duration::from_secs(4));
    let instances: BTreeMap<String, String> = seen
        .iter()
        .map(|s| {
            (
                s.labels["service_name"].clone(),
                s.labels["instance"].clone(),
            )
        })
        .collect();
    assert_eq!(
        instances.values().collect::<BTreeSet<_>>().len(),
        4,
        "every process its own instance: {instances:?}"
    );
    let python_service = format!("{FLEET}/{PYTHON_SERVER}");
    let python_instance = instances
        .get(&python_service)
        .unwrap_or_else(|| panic!("no {python_service} in {instances:?}"))
        .clone();
    assert_eq!(
        python_instance,
        format!("{RUN_ID}-rank0"),
        "Gym's Python instance id (why ours differ: see docs/nemo-gym.md)"
    );

    // Gym's resource keys on every gym series of every process, with the run id.
    let all = vm
        .query("{__name__=~\"gym_.*\"}")
        .unwrap_or_else(|e| panic!("{e}"));
    for s in &all {
        for key in [
            "nemo_gym_server_name",
            "nemo_gym_server_type",
            "nemo_gym_service_group",
            "nemo_run_id",
            "job",
        ] {
            assert!(
                s.labels.get(key).is_some_and(|v| !v.is_empty()),
                "{key} missing on {:?}",
                s.labels
            );
        }
        assert_eq!(s.labels["nemo_run_id"], RUN_ID, "{:?}", s.labels);
        assert_eq!(s.labels["nemo_gym_service_group"], FLEET, "{:?}", s.labels);
        assert_eq!(s.labels["job"], FLEET, "{:?}", s.labels);
    }
    let types: BTreeMap<String, String> = all
        .iter()
        .map(|s| {
            (
                s.labels["service_name"].clone(),
                s.labels["nemo_gym_server_type"].clone(),
            )
        })
        .collect();
    assert_eq!(types[&python_service], "resources_servers");
    assert_eq!(types[&format!("{FLEET}/orchestrator")], "orchestrator");
    assert_eq!(
        types.values().filter(|t| *t == "resources_servers").count(),
        2,
        "ours and Gym's resources server: {types:?}"
    );

    // Same names and types: what Gym's process exports, ours exports under the
    // same series names (a histogram as _bucket with le, _sum, _count; the gauge bare).
    let python_names = exported(&vm, &python_instance);
    let gym_contract: BTreeSet<String> = [
        "gym_rollout_duration_ms_milliseconds_bucket",
        "gym_rollout_duration_ms_milliseconds_count",
        "gym_rollout_duration_ms_milliseconds_sum",
        "gym_verify_duration_ms_milliseconds_bucket",
        "gym_verify_duration_ms_milliseconds_count",
        "gym_verify_duration_ms_milliseconds_sum",
        "gym_verify_success_rate",
    ]
    .map(String::from)
    .into();
    assert_eq!(python_names, gym_contract, "Gym's Python process");
    let ours: BTreeSet<String> = instances
        .iter()
        .filter(|(service, _)| **service != python_service)
        .flat_map(|(_, instance)| exported(&vm, instance))
        .collect();
    assert!(
        gym_contract.is_subset(&ours),
        "ours lack {:?}",
        gym_contract.difference(&ours).collect::<Vec<_>>()
    );
    for histogram in [
        "gym_rollout_duration_ms_milliseconds_bucket",
        "gym_verify_duration_ms_milliseconds_bucket",
    ] {
        let buckets = vm.query(histogram).unwrap_or_else(|e| panic!("{e}"));
        let with_le: BTreeSet<&str> = buckets
            .iter()
            .filter(|s| s.labels.contains_key("le"))
            .map(|s| s.labels["service_name"].as_str())
            .collect();
        assert!(
            with_le.contains(python_service.as_str()) && with_le.len() >= 2,
            "{histogram}: buckets (with le) from Gym's process and ours: {with_le:?}"
        );
    }
    let gauge = vm
        .query("gym_verify_success_rate")
        .unwrap_or_else(|e| panic!("{e}"));
    let rates: BTreeMap<&str, f64> = gauge
        .iter()
        .map(|s| (s.labels["service_name"].as_str(), s.value))
        .collect();
    for service in [python_service.as_str(), &format!("{FLEET}/resources-0")] {
        assert!(
            rates.get(service).is_some_and(|r| (0.0..=1.0).contains(r)),
            "{service}'s success rate: {rates:?}"
        );
    }

    // The operator kit, process by process (`extra_label=instance=...` puts the
    // matcher on every selector): a query returns data for every process that
    // exports every series it reads.
    let rules = rules();
    let mut queries: Vec<(String, String, bool)> = rules
        .iter()
        .map(|r| {
            let kind = if r.alert { "alert" } else { "record" };
            (
                format!("{kind} {} {:?}", r.name, r.labels),
                expand(&r.expr, &rules),
                r.alert,
            )
        })
        .collect();
    // A panel reading a recording rule reads it expanded, without its job
    // matcher: this fleet is the only job here.
    let panels = panel_queries(FLEET).into_iter().map(|(t, e)| {
        let bare =
            |e: String, r: &Rule| e.replace(&format!("{}{{job=~\"{FLEET}\"}}", r.name), &r.name);
        (t, expand(&rules.iter().fold(e, bare), &rules), false)
    });
    queries.extend(panels);
    let exports: BTreeMap<&String, BTreeSet<String>> =
        instances.values().map(|i| (i, exported(&vm, i))).collect();
    let mut problems = Vec::new();
    let mut python_answers = 0;
    let mut answered: BTreeMap<&str, usize> = BTreeMap::new();
    for (what, expr, alert) in &queries {
        let unexpanded: Vec<String> = reads_tokens(expr)
            .into_iter()
            .filter(|t| t.contains(':'))
            .collect();
        if has_variable(expr) || !unexpanded.is_empty() {
            problems.push(format!(
                "{what}: a variable or rule left in `{expr}`: {unexpanded:?}"
            ));
            continue;
        }
        if let Err(e) = vm.query(expr) {
            problems.push(format!("{what}: {e}"));
            continue;
        }
        if *alert {
            continue;
        }
        // The old HTTP metric is the other branch of the HTTP rules' `or`: no
        // process here emits it (Gym's Python server here has no FastAPI app),
        // so a process answers for what it reads of the stable one.
        let needs: BTreeSet<String> = reads(expr)
            .into_iter()
            .filter(|name| !name.starts_with("http_server_duration_milliseconds"))
            .collect();
        for (instance, has) in &exports {
            if !needs.is_subset(has) {
                continue;
            }
            let got = vm
                .query_with_extra_label(expr, &format!("instance={instance}"))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            if got.is_empty() {
                problems.push(format!("{what}: nothing for {instance}: `{expr}`"));
                continue;
            }
            if **instance == python_instance {
                python_answers += 1;
            }
            let service = instances
                .iter()
                .find(|(_, i)| i == instance)
                .map_or("?", |(s, _)| s.as_str());
            *answered.entry(service).or_default() += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{} rules and panel queries run ({} alerts, run only); answered per process: {answered:?}",
        queries.len(),
        queries.iter().filter(|q| q.2).count()
    );
    // Every rule and panel over Gym's three instruments answered for Gym's process.
    let over_gym_contract = queries
        .iter()
        .filter(|(_, e, alert)| {
            !alert && {
                let r = reads(e);
                !r.is_empty() && r.is_subset(&gym_contract)
            }
        })
        .count();
    assert!(
        over_gym_contract >= 10,
        "only {over_gym_contract} queries over Gym's instruments"
    );
    assert_eq!(python_answers, over_gym_contract);
    // One fleet size, from our orchestrator; Gym's server writes none.
    let duplicated = vm
        .query("count by (job) (gym_servers_active) > 1")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(duplicated.is_empty(), "{duplicated:?}");

    drop(py);
    drop(fleet);
}

#[test]
fn gym_switches_silence_our_fleet_as_they_silence_gym() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let gym = Gym::set_up();
    let vm = VictoriaMetrics::start().expect("victoria-metrics starts");
    let everything = "{__name__=~\"gym_.*|http_.*\"}";

    // NEMO_GYM_OTEL_ENABLED=false over Gym's environment: nothing leaves the fleet.
    let mut env = gym_environment(&gym, &vm, "per_rollout", false);
    env.insert("NEMO_GYM_OTEL_ENABLED".into(), "false".into());
    let (status, output) = start_fleet(&env, 3).wait(Duration::from_secs(60));
    assert!(status.success(), "{output}");
    assert!(
        output.contains("NEMO_GYM_OTEL_ENABLED"),
        "no line says why nothing is exported:\n{output}"
    );
    let stored = vm.query(everything).unwrap_or_else(|e| panic!("{e}"));
    assert!(stored.is_empty(), "exported while disabled: {stored:?}");

    // Gym's `default` span groups: rollouts, and no verification, as in Gym.
    let env = gym_environment(&gym, &vm, "default", false);
    let (status, output) = start_fleet(&env, 3).wait(Duration::from_secs(60));
    assert!(status.success(), "{output}");
    assert!(
        output.contains("gym.verify.* will not be recorded")
            && output.contains("NEMO_GYM_OTEL_SPAN_GROUPS"),
        "no line says why verifications are not recorded:\n{output}"
    );
    let rollouts = vm
        .wait_for(
            "sum(gym_rollout_duration_ms_milliseconds_count)",
            Duration::from_secs(10),
            |s| s.first().is_some_and(|s| s.value > 0.0),
        )
        .unwrap_or_else(|e| panic!("{e}\n{output}"));
    assert!(rollouts[0].value > 0.0);
    for verified in [
        "gym_verify_duration_ms_milliseconds_count",
        "gym_verify_completed_total",
        "gym_verify_success_rate",
    ] {
        let got = vm.query(verified).unwrap_or_else(|e| panic!("{e}"));
        let recorded: Vec<&Sample> = got.iter().filter(|s| s.value > 0.0).collect();
        assert!(
            recorded.is_empty(),
            "{verified} recorded under `default`: {recorded:?}"
        );
    }
}

#[test]
fn gyms_memory_gauges_from_both_languages_answer_one_query() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let gym = Gym::set_up();
    let vm = relabelled_victoria_metrics();
    let env = gym_environment(&gym, &vm, "per_rollout", true);

    // Our orchestrator samples the server and agent it launched; Gym's
    // orchestrator code samples the Python server it "launched".
    let fleet = start_fleet(&env, 30);
    let server = gym.spawn(&["serve", PYTHON_SERVER, "30"], &env);
    let pid = server.0.id().to_string();
    let orchestrate = ["orchestrate", PYTHON_SERVER, &pid, "30"];
    let _orchestrator = gym.spawn(&orchestrate, &env);

    // One query over Gym's name answers for every server of both languages.
    let usage = "gym_server_memory_usage_bytes{memory_type=\"rss\"}";
    let want: BTreeSet<&str> = ["agent-0", "resources-0", PYTHON_SERVER].into();
    // Until every server has its exec'd image: the first sample of a child
    // our orchestrator just spawned can come before its exec (0.7 MB seen).
    let samples = vm
        .wait_for(usage, Duration::from_secs(30), |s| {
            let named: BTreeSet<&str> = (s.iter())
                .filter_map(|x| x.labels.get("nemo_gym_server_name").map(String::as_str))
                .collect();
            named == want && s.len() == want.len() && s.iter().all(|x| x.value > 1e6)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", context(&fleet, &vm)));
    // Gym's attributes and the fleet's labels on either language's, each
    // attributed to an orchestrator service (resource keys beyond these
    // differ: Gym's lens adds its own, as docs/nemo-gym.md says).
    let shared = [
        "job",
        "instance",
        "service_name",
        "nemo_run_id",
        "nemo_gym_server_name",
        "nemo_gym_server_type",
        "process_pid",
        "memory_type",
    ];
    let shape = |s: &Sample| -> BTreeSet<String> {
        (s.labels.keys())
            .filter(|k| shared.contains(&k.as_str()))
            .cloned()
            .collect()
    };
    let python = samples
        .iter()
        .find(|s| s.labels["nemo_gym_server_name"] == PYTHON_SERVER)
        .expect("Gym's");
    assert_eq!(python.labels["process_pid"], pid, "{:?}", python.labels);
    assert_eq!(shape(python).len(), shared.len(), "{:?}", python.labels);
    assert_eq!(
        python.labels["service_name"],
        format!("{FLEET}/orchestrator")
    );
    for ours in samples
        .iter()
        .filter(|s| s.labels["nemo_gym_server_name"] != PYTHON_SERVER)
    {
        assert_eq!(
            (shape(ours), &ours.labels["service_name"]),
            (shape(python), &python.labels["service_name"]),
            "ours {:?}\nGym's {:?}",
            ours.labels,
            python.labels
        );
        assert!(ours.value > 1e6 && python.value > 1e6, "{samples:?}");
    }
    // Every gauge Gym's orchestrator exports, ours exports too.
    for gauge in [
        "gym_server_memory_sampled_peak_bytes",
        "gym_server_processes",
        "gym_host_memory_usage_bytes",
        "gym_host_memory_available_bytes",
        "gym_host_memory_total_bytes",
        "gym_host_memory_sampled_peak_bytes",
    ] {
        let by_sdk = format!("count by (telemetry_sdk_language) ({gauge})");
        vm.wait_for(&by_sdk, Duration::from_secs(10), |s| s.len() == 2)
            .unwrap_or_else(|e| panic!("{gauge}: {e}"));
    }
}

#[test]
fn our_agents_call_a_real_gym_fastapi_server_and_every_http_panel_answers_for_both() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let gym = Gym::set_up();
    let vm = relabelled_victoria_metrics();
    // Neither Gym nor lens sets OTEL_SEMCONV_STABILITY_OPT_IN: the FastAPI
    // server emits the old `http.server.duration`, ours the stable name.
    let env = gym_environment(&gym, &vm, "per_rollout", false);
    assert!(!env.contains_key("OTEL_SEMCONV_STABILITY_OPT_IN"));

    const FASTAPI: &str = "gym_weather";
    let port = gym_testkit::free_port();
    let port_arg = port.to_string();
    let server = gym.spawn(&["fastapi", FASTAPI, &port_arg], &env);
    let health = format!("http://127.0.0.1:{port}/health");
    let up = (0..120).any(|_| {
        std::thread::sleep(Duration::from_millis(500));
        gym_testkit::http_get(&health, &[]).is_ok_and(|(status, _, _)| status == 200)
    });
    assert!(
        up,
        "Gym's FastAPI server (pid {}) did not answer {health} in 60 s",
        server.0.id()
    );

    let gym_target = format!("127.0.0.1:{port}");
    let fleet = start_fleet_with(&env, 40, &["--gym-resources-servers".into(), gym_target]);
    let context = || context(&fleet, &vm);

    // Our agent's calls reach Gym's /verify (its route template in
    // `http_target`, as the old metric has it), and our server's.
    let gym_service = format!("{FLEET}/{FASTAPI}");
    let calls = format!(
        "sum by (instance) (http_server_duration_milliseconds_count{{service_name=\"{gym_service}\", http_target=\"/verify\", http_method=\"POST\", http_status_code=\"200\"}})"
    );
    let gym = vm
        .wait_for(&calls, Duration::from_secs(40), |s| {
            s.len() == 1 && s[0].value >= 3.0
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
    let gym_instance = gym[0].labels["instance"].clone();
    let ours = vm
        .wait_for(
            &format!("sum by (instance) (http_server_request_duration_seconds_count{{service_name=\"{FLEET}/resources-0\"}})"),
            Duration::from_secs(10),
            |s| s.len() == 1 && s[0].value >= 3.0,
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
    let our_instance = ours[0].labels["instance"].clone();
    // Every HTTP panel, its rules expanded, answers for Gym's server (the
    // old metric) and for ours (the stable one), by route.
    let rules = rules();
    let panels: Vec<(String, String)> = panel_queries(FLEET)
        .into_iter()
        .map(|(title, e)| {
            let bare = |e: String, r: &Rule| {
                e.replace(&format!("{}{{job=~\"{FLEET}\"}}", r.name), &r.name)
            };
            (title, expand(&rules.iter().fold(e, bare), &rules))
        })
        .filter(|(_, expr)| reads(expr).iter().any(|n| n.starts_with("http_server_")))
        .collect();
    assert!(panels.len() >= 2, "the HTTP panels: {panels:?}");
    let mut problems = Vec::new();
    for (title, expr) in &panels {
        for (who, instance) in [("Gym's", &gym_instance), ("ours", &our_instance)] {
            // Retried for 15 s: a rate needs two exports of each series.
            let answer = || {
                let got = vm
                    .query_with_extra_label(expr, &format!("instance={instance}"))
                    .unwrap_or_else(|e| panic!("{title}: {e}"));
                let on_verify =
                    |s: &Sample| s.labels.get("http_route").is_some_and(|r| r == "/verify");
                let good = got.iter().any(on_verify) && got.iter().all(|s| s.value.is_finite());
                (good, got)
            };
            let (mut good, mut got) = answer();
            for _ in 0..30 {
                if good {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
                (good, got) = answer();
            }
            if !good {
                problems.push(format!(
                    "{title}: {who} ({instance}) gave {got:?}\n  `{expr}`"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n{}",
        problems.join("\n"),
        context()
    );
}
