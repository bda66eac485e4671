//! The process instruments ([`crate::OtelBuilder::with_process_metrics`]):
//! OpenTelemetry's `process.*` semantic conventions (semconv 1.3x, status
//! Development), as asynchronous instruments on the `gym-metrics` meter whose
//! callbacks read `/proc` ([`gym_metrics_kit::process`]) at each
//! collection, so every export carries the values of that moment.
//!
//! | instrument | kind | unit | attributes |
//! |---|---|---|---|
//! | `process.cpu.time` | counter (f64) | `s` | `cpu.mode` = `user`, `system` |
//! | `process.memory.usage` | up-down counter (i64) | `By` | |
//! | `process.memory.virtual` | up-down counter (i64) | `By` | |
//! | `process.thread.count` | up-down counter (i64) | `{thread}` | |
//! | `process.unix.file_descriptor.count` | up-down counter (i64) | `{file_descriptor}` | |
//! | `process.uptime` | gauge (f64) | `s` | |
//!
//! `process.unix.file_descriptor.count` is the current name (it replaced
//! `process.open_file_descriptor.count`). Two values of the Prometheus path
//! have no semantic convention and are not exported here: the descriptor
//! limit (`process_max_fds`) and the start time
//! (`process_start_time_seconds`), whose convention is `process.uptime`
//! (now minus the start) instead.

use opentelemetry::metrics::Meter;
use opentelemetry::KeyValue;

use gym_metrics_kit::process::{log_read_failure_once, ProcessReading};

/// The names, as exported (also what the tests assert).
pub(crate) const CPU_TIME: &str = "process.cpu.time";
pub(crate) const MEMORY_USAGE: &str = "process.memory.usage";
pub(crate) const MEMORY_VIRTUAL: &str = "process.memory.virtual";
pub(crate) const THREAD_COUNT: &str = "process.thread.count";
pub(crate) const FILE_DESCRIPTOR_COUNT: &str = "process.unix.file_descriptor.count";
pub(crate) const UPTIME: &str = "process.uptime";

/// This collection's reading; `None` (logged once) when `/proc` cannot be
/// read, and the instruments then observe nothing.
fn read() -> Option<ProcessReading> {
    ProcessReading::read()
        .map_err(|e| log_read_failure_once("gym-metrics-otel", &e))
        .ok()
}

fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An up-down counter's name, unit, description and value.
type UpDown = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ProcessReading) -> u64,
);

/// Registers the process instruments on `meter`. The SDK keeps their
/// callbacks for the meter's life, so the handles need not be kept.
pub(crate) fn register(meter: &Meter) {
    meter
        .f64_observable_counter(CPU_TIME)
        .with_unit("s")
        .with_description("Total CPU seconds broken down by different states.")
        .with_callback(|observer| {
            if let Some(r) = read() {
                observer.observe(r.cpu_user_seconds, &[KeyValue::new("cpu.mode", "user")]);
                observer.observe(r.cpu_system_seconds, &[KeyValue::new("cpu.mode", "system")]);
            }
        })
        .build();
    let gauges: [UpDown; 4] = [
        (
            MEMORY_USAGE,
            "By",
            "The amount of physical memory in use.",
            |r| r.resident_bytes,
        ),
        (
            MEMORY_VIRTUAL,
            "By",
            "The amount of committed virtual memory.",
            |r| r.virtual_bytes,
        ),
        (THREAD_COUNT, "{thread}", "Process threads count.", |r| {
            r.threads
        }),
        (
            FILE_DESCRIPTOR_COUNT,
            "{file_descriptor}",
            "Number of unix file descriptors in use by the process.",
            |r| r.open_fds,
        ),
    ];
    for (name, unit, description, value) in gauges {
        meter
            .i64_observable_up_down_counter(name)
            .with_unit(unit)
            .with_description(description)
            .with_callback(move |observer| {
                if let Some(r) = read() {
                    observer.observe(as_i64(value(&r)), &[]);
                }
            })
            .build();
    }
    meter
        .f64_observable_gauge(UPTIME)
        .with_unit("s")
        .with_description("The time the process has been running.")
        .with_callback(|observer| {
            let Some(r) = read() else { return };
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(r.start_time_seconds);
            observer.observe((now - r.start_time_seconds).max(0.0), &[]);
        })
        .build();
}
