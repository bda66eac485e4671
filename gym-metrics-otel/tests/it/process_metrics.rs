//! `with_process_metrics`: OpenTelemetry's `process.*` semantic conventions
//! (names, kinds, units, `cpu.mode`), observed at each collection: ten more
//! open files, four more threads and spent CPU show in the next export.
//! Alone in its binary: no other test opens descriptors or threads
//! meanwhile.
#![cfg(target_os = "linux")]

use gym_testkit::process_load::while_holding;

use crate::support::otlp_json::*;
use crate::support::*;
use gym_metrics_otel::{MetricsExporter, OtelBuilder, SCOPE_NAME};
use serde_json::Value;

/// (name, OTLP data kind, monotonic, unit).
const EXPECTED: [(&str, &str, Option<bool>, &str); 6] = [
    ("process.cpu.time", "sum", Some(true), "s"),
    ("process.memory.usage", "sum", Some(false), "By"),
    ("process.memory.virtual", "sum", Some(false), "By"),
    ("process.thread.count", "sum", Some(false), "{thread}"),
    (
        "process.unix.file_descriptor.count",
        "sum",
        Some(false),
        "{file_descriptor}",
    ),
    ("process.uptime", "gauge", None, "s"),
];

fn number(point: &Value) -> f64 {
    match (&point["asInt"], &point["asDouble"]) {
        (Value::Null, d) => d.as_f64().unwrap(),
        (i, _) => i
            .as_str()
            .map(|s| s.parse().unwrap())
            .or(i.as_f64())
            .unwrap(),
    }
}

/// The last export's document.
fn last(buf: &SharedBuf) -> Value {
    let text = buf.text();
    serde_json::from_str(text.lines().last().expect("an export")).unwrap()
}

fn cpu(doc: &Value) -> (f64, f64) {
    let m = metric(doc, "process.cpu.time").unwrap();
    let mode = |p: &Value| {
        let a = &p["attributes"];
        assert_eq!(a.as_array().unwrap().len(), 1, "{p}");
        assert_eq!(a[0]["key"], "cpu.mode");
        a[0]["value"]["stringValue"].as_str().unwrap().to_string()
    };
    let points = m["sum"]["dataPoints"].as_array().unwrap();
    let of = |want: &str| {
        let p = points
            .iter()
            .find(|p| mode(p) == want)
            .unwrap_or_else(|| panic!("{m}"));
        number(p)
    };
    assert_eq!(points.len(), 2, "{m}");
    (of("user"), of("system"))
}

fn value(doc: &Value, name: &str) -> f64 {
    let kind = if name == "process.uptime" {
        "gauge"
    } else {
        "sum"
    };
    number(point(doc, name, kind))
}

#[test]
fn semconv_process_instruments_follow_the_process() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let buf = SharedBuf::default();
    let (_recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .with_process_metrics()
        .build()
        .unwrap();
    guard.force_flush().unwrap();
    let before = last(&buf);
    for (name, kind, monotonic, unit) in EXPECTED {
        let m = metric(&before, name).unwrap_or_else(|| panic!("{name} not exported: {before}"));
        assert_eq!(m["unit"], unit, "{m}");
        assert!(m[kind].is_object(), "{name} is a {kind}: {m}");
        if let Some(monotonic) = monotonic {
            assert_eq!(
                m[kind]["isMonotonic"].as_bool().unwrap_or(false),
                monotonic,
                "{m}"
            );
        }
        assert!(!m["description"].as_str().unwrap_or("").is_empty(), "{m}");
    }
    // On our meter, beside the gym instruments.
    let scope = &before["resourceMetrics"][0]["scopeMetrics"][0];
    assert_eq!(scope["scope"]["name"], SCOPE_NAME);
    // No semantic convention, so not exported: the descriptor limit and the
    // start time (process.uptime stands for it).
    for absent in ["process.max_fds", "process.start_time", "process_max_fds"] {
        assert!(metric(&before, absent).is_none());
    }
    assert!(value(&before, "process.memory.usage") > 0.0);
    assert!(value(&before, "process.memory.virtual") >= value(&before, "process.memory.usage"));
    let uptime = value(&before, "process.uptime");
    assert!((0.0..86_400.0).contains(&uptime), "{uptime}");

    // Ten files, four threads and some CPU later:
    let (user, system) = cpu(&before);
    let after = while_holding(|| {
        spin_cpu(user + system + 0.05);
        guard.force_flush().unwrap();
        last(&buf)
    });

    let rose = |name: &str| value(&after, name) - value(&before, name);
    let fds = rose("process.unix.file_descriptor.count");
    assert!(fds >= 10.0, "{fds}");
    assert!(rose("process.thread.count") >= 4.0);
    let (user_after, system_after) = cpu(&after);
    assert!(user_after + system_after >= user + system + 0.05);
    assert!(user_after >= user && system_after >= system);
    assert!(rose("process.uptime") >= 0.0);
    guard.shutdown().unwrap();
}

/// Busy work until this process has used `target` CPU seconds (bounded: a
/// clock that never moves fails the caller's assertion instead).
fn spin_cpu(target: f64) {
    use gym_metrics_kit::process::ProcessReading;
    let mut x = 0u64;
    for _ in 0..100_000 {
        if ProcessReading::read().unwrap().cpu_seconds() >= target {
            return;
        }
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
}
