//! What every launched process shares: when to stop, its own tally, and the
//! once-a-second status line for the orchestrator.

use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;

use super::histogram::Buckets;
use super::protocol::{emit, Event, Source, Tally};
use crate::backend::MetricsReader;

/// What a process's own exposition says of its work: the histogram family
/// that counts and times it, and the counter of its successes (if a gym
/// instrument carries them).
#[derive(Debug, Clone, Copy)]
pub struct Readback {
    /// The exposed histogram family (its `_bucket` series are read).
    pub histogram: &'static str,
    /// The exposed counter of successes, where there is one.
    pub succeeded: Option<&'static str>,
}

/// An agent's work on the Prometheus path: `gym.rollout.duration_ms`. No gym
/// instrument says whether a rollout's verification passed (the resources
/// server records that), so an agent's success count stays its own tally.
pub const ROLLOUT_FAMILY: Readback = Readback {
    histogram: "gym_rollout_duration_ms_milliseconds",
    succeeded: None,
};
/// A resources server's work on the Prometheus path: `gym.verify.duration_ms`
/// and `gym.verify.succeeded`.
pub const VERIFY_FAMILY: Readback = Readback {
    histogram: "gym_verify_duration_ms_milliseconds",
    succeeded: Some("gym_verify_succeeded_total"),
};

/// `127.0.0.1:port`: every process of the fleet binds loopback only.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Resolves when this process should stop: the orchestrator closed our
/// standard input (it asked, or it died), or SIGTERM / SIGINT arrived.
/// Returns what asked.
pub async fn stop_requested() -> &'static str {
    let (closed_tx, closed_rx) = oneshot::channel();
    // A plain thread: a blocking stdin read must not hold the runtime's shutdown.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 256];
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        let _ = closed_tx.send(());
    });
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    tokio::select! {
        _ = closed_rx => "the orchestrator closed our standard input",
        Some(()) = async { term.as_mut()?.recv().await } => "SIGTERM",
        Some(()) = async { int.as_mut()?.recv().await } => "SIGINT",
    }
}

/// This process's own cumulative numbers, kept beside the metrics so the live
/// view works on every backend (and agents can report their `/verify` calls).
#[derive(Debug, Default)]
pub struct LocalTally(Mutex<Tally>);

impl LocalTally {
    /// Counts one rollout or verification.
    pub fn record(&self, duration: Duration, succeeded: bool) {
        let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        t.completed += 1;
        t.succeeded += u64::from(succeeded);
        t.durations.record(duration.as_secs_f64() * 1_000.0);
    }

    /// Counts one `/verify` call made by an agent: answered or not.
    pub fn record_call(&self, answered: bool) {
        let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if answered {
            t.verify_calls += 1;
        } else {
            t.verify_errors += 1;
        }
    }

    /// The numbers now. Where the backend keeps an exposition (prom), the
    /// count, the durations and (for servers) the successes are what the
    /// process's own `/metrics` says, not the local tally; with recording
    /// compiled off there are no numbers at all ([`Source::Off`]).
    pub fn snapshot(&self, reader: &MetricsReader, family: Readback) -> Tally {
        let mut tally = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if !gym_metrics_api::enabled() {
            tally.source = Source::Off;
        } else if let Some(text) = reader.render() {
            // Absent families mean nothing recorded yet: zero, not the tally.
            tally.durations = Buckets::from_exposition(&text, family.histogram).unwrap_or_default();
            tally.completed = tally.durations.total();
            if let Some(counter) = family.succeeded {
                tally.succeeded = counter_value(&text, counter).unwrap_or(0);
            }
            tally.source = Source::Metrics;
        } else {
            tally.source = Source::Local;
        }
        tally
    }
}

/// The value of the unlabelled-but-for-scope counter series `name` in a text
/// exposition (`name{...} 3`).
fn counter_value(text: &str, name: &str) -> Option<u64> {
    let prefix = format!("{name}{{");
    let line = text.lines().find(|line| line.starts_with(&prefix))?;
    let value: f64 = line.rsplit(' ').next()?.parse().ok()?;
    Some(value as u64)
}

/// Emits a status line once a second, forever (abort the task to stop it).
pub async fn report_every_second(tally: Arc<LocalTally>, reader: MetricsReader, family: Readback) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        emit(&Event::Status(tally.snapshot(&reader, family)));
    }
}

/// A current-thread Tokio runtime: every process of the fleet waits on
/// timers and sockets, it never computes.
///
/// # Errors
/// The OS refused the runtime's resources.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests {
    use super::counter_value;

    #[test]
    fn reads_a_counter_from_an_exposition() {
        let text = "# TYPE gym_verify_succeeded_total counter\n\
                    gym_verify_succeeded_total{otel_scope_name=\"gym-metrics\"} 7\n";
        assert_eq!(counter_value(text, "gym_verify_succeeded_total"), Some(7));
        assert_eq!(counter_value(text, "gym_verify_completed_total"), None);
    }
}
