//! What a child process tells the orchestrator: one JSON object per line on
//! its standard output. Logs and errors go to standard error.
//!
//! This is what makes the live view backend-independent; on `prom` the
//! durations inside come from the process's own `/metrics`.

use std::io::Write;
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::histogram::Buckets;

/// One line of a child's standard output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The process is up.
    Ready {
        /// A resources server's `/verify` address.
        verify_addr: Option<SocketAddr>,
        /// Where the process serves `/metrics`, if it does.
        metrics_addr: Option<SocketAddr>,
    },
    /// Cumulative numbers, once a second.
    Status(Tally),
    /// The process stopped its work; these are its totals.
    Final(Tally),
}

/// Cumulative numbers of one process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Rollouts (agent) or verifications (server) completed.
    pub completed: u64,
    /// Rollouts whose verification passed, or verifications that passed.
    pub succeeded: u64,
    /// Agents: `/verify` calls that got an answer (any status).
    pub verify_calls: u64,
    /// Agents: `/verify` calls that got no answer (connection refused, timeout).
    pub verify_errors: u64,
    /// Durations, in milliseconds.
    pub durations: Buckets,
    /// Where these numbers come from.
    pub source: Source,
}

/// Where a process's reported numbers come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Nothing reported yet (a process still starting).
    #[default]
    Pending,
    /// Read back from the process's own metrics (its `/metrics` exposition):
    /// what the pipeline reports.
    Metrics,
    /// The process's own tally, kept beside the metrics: the backend keeps
    /// nothing to read back (otel pushes).
    Local,
    /// Recording is compiled off (the application's `noop` build): there are
    /// no metrics, and the view shows none.
    Off,
}

/// Writes `event` as one line on standard output.
pub fn emit(event: &Event) {
    let Ok(line) = serde_json::to_string(event) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe means the orchestrator is gone; the stop signal follows.
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Parses one line of a child's output; `None` for anything else.
pub fn parse(line: &str) -> Option<Event> {
    serde_json::from_str(line).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_as_one_line() {
        let e = Event::Final(Tally {
            completed: 3,
            verify_calls: 3,
            ..Tally::default()
        });
        let line = serde_json::to_string(&e).unwrap();
        assert!(line.starts_with("{\"event\":\"final\""), "{line}");
        assert!(!line.contains('\n'));
        assert_eq!(parse(&line), Some(e));
        assert_eq!(parse("hello"), None);
    }
}
