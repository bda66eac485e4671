//! Issue 19 §4: one process using all three extension paths (the `metrics`
//! bridge, the backend's native API, process metrics) beside a gym
//! instrument (`src/bin/extensions.rs`), read back from a real store:
//!
//! - prom: a real Prometheus scrapes it; `promtool check metrics` finds
//!   nothing in its exposition;
//! - otel: it pushes OTLP into a real VictoriaMetrics.
//!
//! Both tests hold the stored series to the one table [`EXPECTED`] (name,
//! the instrument's own label keys, value), so the two paths give the same
//! names and label keys (the CI runs both feature sets). Process metrics are
//! named by each path's own convention (the Prometheus clients' `process_*`
//! on prom, OpenTelemetry's `process.*` on otel), so each test checks its
//! path's names ([`PROM_PROCESS`], [`OTEL_PROCESS`]).
#![cfg(not(feature = "noop"))]

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};

use gym_testkit::Sample;

/// The series both paths store: name, the instrument's own label keys (what
/// is left once the target's, the scope's and the resource's labels are
/// taken off), and the value.
const EXPECTED: &[(&str, &[&str], f64)] = &[
    ("app_jobs_done_total", &["queue"], 3.0),
    ("app_job_duration_seconds_count", &["queue"], 1.0),
    ("app_job_duration_seconds_sum", &["queue"], 0.2),
    ("app_native_calls_total", &[], 2.0),
    ("gym_verify_completed_total", &[], 1.0),
    ("gym_verify_succeeded_total", &[], 1.0),
];

/// Process metrics on the prom path: the Prometheus clients' names.
#[cfg(all(feature = "prom", not(feature = "noop")))]
const PROM_PROCESS: &[&str] = &[
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_open_fds",
    "process_max_fds",
    "process_threads",
    "process_start_time_seconds",
];

/// Process metrics on the otel path: OpenTelemetry's `process.*` names as
/// VictoriaMetrics writes them (units as suffixes, `_total` on counters).
#[cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]
const OTEL_PROCESS: &[&str] = &[
    "process_cpu_time_seconds_total",
    "process_memory_usage_bytes",
    "process_memory_virtual_bytes",
    "process_thread_count",
    "process_unix_file_descriptor_count",
];

/// A process metric's value: at least 0 (an idle short-lived process may
/// have used no measurable CPU yet), and above 0 for its memory,
/// descriptors and threads, which every process has.
fn plausible(name: &str, value: f64) -> bool {
    let always_some = ["memory", "fd", "thread", "descriptor"]
        .iter()
        .any(|w| name.contains(w));
    value.is_finite()
        && if always_some {
            value > 0.0
        } else {
            value >= 0.0
        }
}

/// Labels that say where a series came from, not what the instrument records.
fn is_provenance(key: &str) -> bool {
    matches!(
        key,
        "__name__" | "job" | "instance" | "otel_scope_name" | "otel_scope_version" | "gym_role"
    ) || ["service_", "telemetry_", "nemo_"]
        .iter()
        .any(|p| key.starts_with(p))
}

/// Holds every sample of [`EXPECTED`] to its label keys and value.
fn check_expected(query: impl Fn(&str) -> Vec<Sample>) {
    for (name, keys, value) in EXPECTED {
        let samples = query(name);
        assert_eq!(samples.len(), 1, "{name}: {samples:?}");
        let own: BTreeSet<&str> = samples[0]
            .labels
            .keys()
            .map(String::as_str)
            .filter(|k| !is_provenance(k))
            .collect();
        assert_eq!(own, keys.iter().copied().collect(), "{name}: {samples:?}");
        assert!(
            (samples[0].value - value).abs() < 1e-9,
            "{name} = {}, want {value}",
            samples[0].value
        );
    }
}

/// `extensions` with `env`, its standard input and output piped.
fn start(env: &[(&str, String)]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_extensions"))
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("extensions starts")
}

/// Every name `samples` hold, with the largest value of its series (a CPU
/// time has one series per mode on the otel path).
fn names(samples: &[Sample]) -> BTreeMap<String, f64> {
    let mut names: BTreeMap<String, f64> = BTreeMap::new();
    for s in samples {
        if let Some(name) = s.labels.get("__name__") {
            let v = names.entry(name.clone()).or_insert(f64::MIN);
            *v = v.max(s.value);
        }
    }
    names
}

#[cfg(all(feature = "prom", not(feature = "noop")))]
#[test]
fn three_extension_paths_scraped_by_prometheus() {
    if gym_testkit::ran_in_child() {
        return;
    }
    use gym_testkit::{
        contract_findings, http_get, promtool_check_metrics, require, Prometheus, Tool,
    };
    use std::io::{BufRead, BufReader};
    use std::time::Duration;

    require(Tool::Prometheus);
    require(Tool::Promtool);
    let mut child = start(&[]);
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let url = lines
        .next()
        .and_then(Result::ok)
        .and_then(|l| l.strip_prefix("metrics at ").map(str::to_string))
        .expect("extensions prints where it serves");
    let (status, _, body) = http_get(&url, &[]).expect("a scrape");
    assert_eq!(status, 200);
    let text = String::from_utf8_lossy(&body).into_owned();
    // Nothing new: only what promtool says of the contract's millisecond names.
    let known = contract_findings();
    let findings: Vec<String> = promtool_check_metrics(&text)
        .expect("promtool runs")
        .into_iter()
        .filter(|f| !known.contains(f))
        .collect();
    assert!(findings.is_empty(), "promtool: {findings:?}\n{text}");

    let target = url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();
    let prometheus = Prometheus::start(&[target], Duration::from_secs(1)).expect("prometheus");
    prometheus
        .wait_for("app_native_calls_total", Duration::from_secs(20), |s| {
            !s.is_empty()
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    check_expected(|name| prometheus.query(name).unwrap_or_else(|e| panic!("{e}")));
    let process = names(
        &prometheus
            .query("{__name__=~\"process_.*\"}")
            .unwrap_or_else(|e| panic!("{e}")),
    );
    for name in PROM_PROCESS {
        assert!(
            process.get(*name).is_some_and(|v| plausible(name, *v)),
            "{name}: {process:?}"
        );
    }
    drop(child.stdin.take());
    assert!(child.wait().expect("extensions exits").success());
}

#[cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]
#[test]
fn three_extension_paths_pushed_into_victoria_metrics() {
    if gym_testkit::ran_in_child() {
        return;
    }
    use gym_testkit::{require, Tool, VictoriaMetrics};
    use std::time::Duration;

    require(Tool::VictoriaMetrics);
    let vm = VictoriaMetrics::start().expect("victoria-metrics starts");
    let mut child = start(&[
        (
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            vm.otlp_http_metrics_endpoint(),
        ),
        (
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            "http/protobuf".into(),
        ),
    ]);
    let status = child.wait().expect("extensions exits");
    assert!(status.success());
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("piped"), &mut out)
        .expect("its output");
    assert!(out.contains("exported"), "{out}");
    vm.wait_for("app_native_calls_total", Duration::from_secs(10), |s| {
        !s.is_empty()
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", vm.log_tail()));
    check_expected(|name| vm.query(name).unwrap_or_else(|e| panic!("{e}")));
    let process = names(
        &vm.query("{__name__=~\"process_.*\"}")
            .unwrap_or_else(|e| panic!("{e}")),
    );
    for name in OTEL_PROCESS {
        assert!(
            process.get(*name).is_some_and(|v| plausible(name, *v)),
            "{name}: {process:?}"
        );
    }
}
