//! The process families ([`crate::PrometheusBuilder::with_process_metrics`]):
//! names, HELP and TYPE exactly as the Prometheus client libraries write
//! them (client_golang's and client_python's process collectors;
//! `process_threads` as the Rust `prometheus` crate and `metrics-process`
//! write it, the Go client having none), without labels, as those clients
//! write them: a dashboard or alert written for any Prometheus-instrumented
//! process works here unchanged. Values are read at each scrape
//! ([`gym_metrics_kit::process`]); `process_max_fds` is absent while
//! the descriptor limit is unlimited, and every process family is absent
//! from a scrape whose `/proc` read failed (logged once).

use gym_metrics_kit::process::ProcessReading;

use super::model::{Kind, Value};

/// Which value of a [`ProcessReading`] a process family shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProcessValue {
    CpuSeconds,
    ResidentMemory,
    VirtualMemory,
    OpenFds,
    MaxFds,
    Threads,
    StartTime,
}

/// One process family: name, HELP, TYPE and value.
pub(crate) struct ProcessFamily {
    pub(crate) name: &'static str,
    pub(crate) help: &'static str,
    pub(crate) kind: Kind,
    pub(crate) value: ProcessValue,
}

/// Every process family, as the Prometheus clients name and describe them.
pub(crate) const PROCESS_FAMILIES: [ProcessFamily; 7] = [
    ProcessFamily {
        name: "process_cpu_seconds_total",
        help: "Total user and system CPU time spent in seconds.",
        kind: Kind::Counter,
        value: ProcessValue::CpuSeconds,
    },
    ProcessFamily {
        name: "process_max_fds",
        help: "Maximum number of open file descriptors.",
        kind: Kind::Gauge,
        value: ProcessValue::MaxFds,
    },
    ProcessFamily {
        name: "process_open_fds",
        help: "Number of open file descriptors.",
        kind: Kind::Gauge,
        value: ProcessValue::OpenFds,
    },
    ProcessFamily {
        name: "process_resident_memory_bytes",
        help: "Resident memory size in bytes.",
        kind: Kind::Gauge,
        value: ProcessValue::ResidentMemory,
    },
    ProcessFamily {
        name: "process_start_time_seconds",
        help: "Start time of the process since unix epoch in seconds.",
        kind: Kind::Gauge,
        value: ProcessValue::StartTime,
    },
    ProcessFamily {
        name: "process_threads",
        help: "Number of OS threads in the process.",
        kind: Kind::Gauge,
        value: ProcessValue::Threads,
    },
    ProcessFamily {
        name: "process_virtual_memory_bytes",
        help: "Virtual memory size in bytes.",
        kind: Kind::Gauge,
        value: ProcessValue::VirtualMemory,
    },
];

impl ProcessValue {
    /// What this value shows in a scrape that read `r`.
    pub(crate) fn sample(self, r: &ProcessReading) -> Option<Value<'static>> {
        Some(match self {
            ProcessValue::CpuSeconds => Value::Float(r.cpu_seconds()),
            ProcessValue::ResidentMemory => Value::Count(r.resident_bytes),
            ProcessValue::VirtualMemory => Value::Count(r.virtual_bytes),
            ProcessValue::OpenFds => Value::Count(r.open_fds),
            ProcessValue::MaxFds => Value::Count(r.max_fds?),
            ProcessValue::Threads => Value::Count(r.threads),
            ProcessValue::StartTime => Value::Float(r.start_time_seconds),
        })
    }
}

/// This scrape's reading, `None` (logged once) when `/proc` cannot be read.
pub(crate) fn read() -> Option<ProcessReading> {
    ProcessReading::read()
        .map_err(|e| gym_metrics_kit::process::log_read_failure_once("gym-metrics-prom", &e))
        .ok()
}
