//! Memory grows with bytes, not series (issue 26, finding 4, and the
//! negative `_sum` of finding 9), re-run at the sizes of the report: the
//! process's peak resident memory (`VmHWM`, reset before each case) must stay
//! under 64 MiB while 1,900 series get 50 kB label values, while 60,000
//! distinct names are recorded, and while 20 clients ask for a large
//! exposition and never read it. The cases run one at a time (one peak per
//! process); the endpoint's is the binary's one global install.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gym_metrics_api::Role;
use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_prom::{MetricsBridgeRecorder, PrometheusBuilder, PrometheusHandle};

/// The acceptance bound of the issue.
const PEAK_RSS_BOUND_KIB: u64 = 64 * 1024;
/// One case at a time: the peak is the process's.
static SERIAL: Mutex<()> = Mutex::new(());

/// Resets the process's peak resident memory to what it holds now
/// (`/proc/self/clear_refs`, Linux 4.0+).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident memory since the last reset, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn bridged() -> (PrometheusHandle, MetricsBridgeRecorder) {
    let (_recorder, handle) = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .build()
        .unwrap();
    let bridge = handle.metrics_recorder().unwrap();
    (handle, bridge)
}

/// A label value of `len` bytes, distinct for each `i`.
fn value(i: usize, len: usize) -> String {
    let mut v = format!("{i:06}-");
    v.push_str(&"x".repeat(len - v.len()));
    v
}

#[test]
fn nineteen_hundred_series_of_50_kb_label_values_stay_bounded() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (handle, bridge) = bridged();
    reset_peak();
    let started = Instant::now();
    metrics::with_local_recorder(&bridge, || {
        for i in 0..1_900 {
            metrics::counter!("upload.bytes", "payload" => value(i, 50_000)).increment(1);
            // Recorded again: the same (overflow) series.
            metrics::counter!("upload.bytes", "payload" => value(i, 50_000)).increment(1);
        }
    });
    let text = handle.render();
    let peak = peak_kib();
    let stats = bridge.stats();
    eprintln!(
        "budgets: 1,900 x 50 kB label values in {:?}: exposition {} bytes, peak RSS {peak} KiB, {stats:?}",
        started.elapsed(),
        text.len()
    );
    assert!(
        text.contains(
            "upload_bytes_total{otel_metric_overflow=\"true\",otel_scope_name=\"metrics\"} 3800\n"
        ),
        "every record is in the overflow series"
    );
    assert!(text.len() < 1 << 20, "exposition of {} bytes", text.len());
    assert_eq!(stats.overflowed, 3_800);
    assert!(peak < PEAK_RSS_BOUND_KIB, "peak RSS {peak} KiB");
}

#[test]
fn sixty_thousand_distinct_names_stay_bounded_in_families() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (handle, bridge) = bridged();
    reset_peak();
    let started = Instant::now();
    metrics::with_local_recorder(&bridge, || {
        for i in 0..60_000 {
            metrics::gauge!(format!("attack.name.{i}")).set(1.0);
        }
    });
    let text = handle.render();
    let peak = peak_kib();
    let families = text
        .lines()
        .filter(|l| l.starts_with("# TYPE attack_name_"))
        .count();
    let stats = bridge.stats();
    eprintln!(
        "budgets: 60,000 names in {:?}: {families} families, exposition {} bytes, peak RSS {peak} KiB, {stats:?}",
        started.elapsed(),
        text.len()
    );
    assert_eq!(families, 1_000, "the default family limit");
    assert_eq!(stats.refused, 59_000);
    assert!(text.len() < 1 << 20, "exposition of {} bytes", text.len());
    assert!(peak < PEAK_RSS_BOUND_KIB, "peak RSS {peak} KiB");
}

#[test]
fn a_negative_histogram_value_never_makes_the_sum_negative() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (handle, bridge) = bridged();
    metrics::with_local_recorder(&bridge, || {
        let wait = metrics::histogram!("queue.wait");
        wait.record(-5.0);
        wait.record(2.0);
        wait.record(f64::NEG_INFINITY);
        wait.record(f64::INFINITY);
    });
    let text = handle.render_openmetrics();
    let sum: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("queue_wait_sum{otel_scope_name=\"metrics\"} "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(sum, 2.0, "{text}");
    assert!(
        text.contains("queue_wait_count{otel_scope_name=\"metrics\"} 1\n"),
        "{text}"
    );
    assert_eq!(bridge.stats().dropped, 3);
}

/// Clients that ask for the exposition and never read a byte of it.
const NEVER_READERS: usize = 20;

#[test]
fn twenty_clients_that_never_read_a_large_exposition_hold_one_copy() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .install()
        .unwrap();
    // About 5.6 MB of exposition, within the bridge's default budgets:
    // 3 families of 2,000 series with 900-byte labels.
    for family in ["rollout.a", "rollout.b", "rollout.c"] {
        for i in 0..2_000 {
            metrics::counter!(family, "trace" => value(i, 900)).increment(1);
        }
    }
    let addr = guard.local_addr();
    let size = guard.handle().render().len();
    assert!(size > 5_000_000, "exposition of {size} bytes");
    reset_peak();
    let started = Instant::now();
    let readers: Vec<TcpStream> = (0..NEVER_READERS)
        .map(|_| {
            let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    // One scrape read to its end: the endpoint answers in turn, so every
    // never-reader was answered (or is being) by then.
    let mut probe = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    probe
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    probe
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    probe.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"));
    assert!(answer.len() > size);
    // Whatever more the endpoint would render, it has by now.
    std::thread::sleep(Duration::from_millis(500));
    let peak = peak_kib();
    let stats = guard.endpoint_stats();
    eprintln!(
        "budgets: {NEVER_READERS} never-readers of a {size}-byte exposition for {:?}: peak RSS {peak} KiB, {stats:?}",
        started.elapsed()
    );
    drop(readers);
    guard.shutdown().unwrap();
    assert!(peak < PEAK_RSS_BOUND_KIB, "peak RSS {peak} KiB");
    assert!(stats.shared_answers >= 1, "{stats:?}");
}
