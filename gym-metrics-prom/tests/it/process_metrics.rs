//! `with_process_metrics`: the seven process families under the Prometheus
//! clients' names, HELP and types, read at each scrape (ten more open files,
//! four more threads and spent CPU show in the next render), in both
//! formats and through the collector, and `promtool check metrics` finds
//! nothing in them. One test, alone in its binary: no other test opens
//! descriptors or threads meanwhile.
#![cfg(target_os = "linux")]

use gym_testkit::process_load::while_holding;
use std::collections::BTreeMap;

use crate::common::exposition::{parse, Family};
use gym_metrics_prom::{PrometheusBuilder, PrometheusHandle};
use gym_testkit::{promtool_check_metrics, require, Tool};

/// The families as client_golang / client_python write them (and
/// `process_threads` as the Rust `prometheus` crate does).
const EXPECTED: [(&str, &str, &str); 7] = [
    (
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time spent in seconds.",
    ),
    (
        "process_max_fds",
        "gauge",
        "Maximum number of open file descriptors.",
    ),
    (
        "process_open_fds",
        "gauge",
        "Number of open file descriptors.",
    ),
    (
        "process_resident_memory_bytes",
        "gauge",
        "Resident memory size in bytes.",
    ),
    (
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
    ),
    (
        "process_threads",
        "gauge",
        "Number of OS threads in the process.",
    ),
    (
        "process_virtual_memory_bytes",
        "gauge",
        "Virtual memory size in bytes.",
    ),
];

/// The one value of the unlabelled family `name`.
fn value(families: &BTreeMap<String, Family>, name: &str) -> f64 {
    let family = &families[name];
    assert_eq!(family.samples.len(), 1, "{name}: {family:?}");
    let ((sample, labels), v) = family.samples.iter().next().unwrap();
    assert_eq!(sample, name);
    assert!(labels.is_empty(), "{name} carries no labels: {labels:?}");
    *v
}

fn scrape(handle: &PrometheusHandle) -> BTreeMap<String, Family> {
    parse(&handle.render())
}

#[test]
fn process_families_follow_the_process_in_both_formats_and_pass_promtool() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_recorder, handle) = PrometheusBuilder::new()
        .with_process_metrics()
        .build()
        .unwrap();
    let (_r, without) = PrometheusBuilder::new().build().unwrap();
    assert!(!without.render().contains("process_"), "opt-in only");

    let text = handle.render();
    let before = parse(&text);
    for (name, kind, help) in EXPECTED {
        let family = before
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        assert_eq!(
            (family.kind.as_str(), family.help.as_str()),
            (kind, help),
            "{name}"
        );
        value(&before, name);
    }
    // After the gym families, before target_info, in name order.
    let at = |n: &str| text.find(&format!("# HELP {n} ")).unwrap();
    assert!(at("gym_verify_succeeded_total") < at("process_cpu_seconds_total"));
    assert!(at("process_virtual_memory_bytes") < at("target_info"));
    assert!(value(&before, "process_max_fds") >= value(&before, "process_open_fds"));
    assert!(value(&before, "process_resident_memory_bytes") > 0.0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start = value(&before, "process_start_time_seconds");
    assert!(
        start <= now + 1.0 && start > now - 86_400.0,
        "{start} vs {now}"
    );

    // Ten files, four threads and some CPU later:
    let cpu_before = value(&before, "process_cpu_seconds_total");
    let after = while_holding(|| {
        spin_cpu_until(&handle, cpu_before + 0.05);
        scrape(&handle)
    });
    let rose = |name: &str| value(&after, name) - value(&before, name);
    assert!(
        rose("process_open_fds") >= 10.0,
        "{}",
        rose("process_open_fds")
    );
    assert!(
        rose("process_threads") >= 4.0,
        "{}",
        rose("process_threads")
    );
    assert!(rose("process_cpu_seconds_total") >= 0.05);
    assert_eq!(rose("process_start_time_seconds"), 0.0);
    let closed = scrape(&handle);
    assert!(value(&after, "process_open_fds") - value(&closed, "process_open_fds") >= 10.0);

    // OpenMetrics: the counter's family is named without `_total`.
    let om = handle.render_openmetrics();
    assert!(
        om.contains("# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total "),
        "{om}"
    );
    assert!(
        om.contains("# TYPE process_open_fds gauge\nprocess_open_fds "),
        "{om}"
    );

    // The collector hands the same families to a `prometheus::Registry`.
    let registry = prometheus::Registry::new();
    registry.register(Box::new(handle.collector())).unwrap();
    let gathered: Vec<(String, prometheus::proto::MetricType)> = registry
        .gather()
        .iter()
        .filter(|f| f.name().starts_with("process_"))
        .map(|f| (f.name().to_string(), f.get_field_type()))
        .collect();
    let expected: Vec<(String, prometheus::proto::MetricType)> = EXPECTED
        .iter()
        .map(|(n, k, _)| {
            let kind = if *k == "counter" {
                prometheus::proto::MetricType::COUNTER
            } else {
                prometheus::proto::MetricType::GAUGE
            };
            (n.to_string(), kind)
        })
        .collect();
    assert_eq!(gathered, expected);

    // promtool: nothing in the process families (the findings it has about
    // our millisecond names are the gym families', see promtool_check.rs).
    // The text format only: `promtool check metrics` reads no OpenMetrics
    // (it takes an OpenMetrics counter's `_total` sample for a family
    // without HELP, ours and the gym counters alike).
    require(Tool::Promtool);
    let findings = promtool_check_metrics(&handle.render()).unwrap();
    let ours: Vec<&String> = findings.iter().filter(|f| f.contains("process_")).collect();
    assert!(ours.is_empty(), "{findings:?}");
}

/// Busy work until the exposition shows `target` CPU seconds (bounded: a
/// value that never moves fails the caller's assertion instead).
fn spin_cpu_until(handle: &PrometheusHandle, target: f64) {
    let mut x = 0u64;
    for _ in 0..100_000 {
        if value(&scrape(handle), "process_cpu_seconds_total") >= target {
            return;
        }
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
}
