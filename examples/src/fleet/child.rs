//! What every launched process shares: when to stop, its own tally, and the
//! once-a-second status line for the orchestrator.

use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;

use super::histogram::Buckets;
use super::protocol::{emit, Event, Tally};
use crate::backend::MetricsReader;

/// The exposed histogram family of `gym.rollout.duration_ms` on the Prometheus path.
pub const ROLLOUT_FAMILY: &str = "gym_rollout_duration_ms_milliseconds";
/// The exposed histogram family of `gym.verify.duration_ms` on the Prometheus path.
pub const VERIFY_FAMILY: &str = "gym_verify_duration_ms_milliseconds";

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

    /// The numbers now; durations read back from the process's own metrics
    /// (histogram `family`) when the backend keeps them.
    pub fn snapshot(&self, reader: &MetricsReader, family: &str) -> Tally {
        let mut tally = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(own) = reader
            .render()
            .and_then(|text| Buckets::from_exposition(&text, family))
        {
            tally.durations = own;
            tally.from_metrics = true;
        }
        tally
    }
}

/// Emits a status line once a second, forever (abort the task to stop it).
pub async fn report_every_second(tally: Arc<LocalTally>, reader: MetricsReader, family: &str) {
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
