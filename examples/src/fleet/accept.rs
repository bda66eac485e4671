//! A listener that holds up under pressure: at most a fixed number of
//! connections are served at once (the next ones wait in the kernel's
//! backlog until one closes), and a failed accept — above all, out of file
//! descriptors — pauses the loop instead of spinning on it, with at most one
//! warning per [`WARN_EVERY`] however often it fails.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The `log` target of the fleet's own lines (`RUST_LOG=gym_fleet=debug`).
pub const LOG_TARGET: &str = "gym_fleet";

/// How long the loop waits after a failed accept: the failure (no file
/// descriptor left, say) lasts until a connection closes, and retrying at
/// once only burns a core and floods the log.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// At most one warning about failed accepts per this interval; the next one
/// says how many failed meanwhile.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// A connection's place among the ones served at once; dropping it frees
/// the place for the next connection.
pub type Slot = OwnedSemaphorePermit;

/// A TCP listener with a connection cap and a paced, quiet retry on failure.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use gym_metrics_examples::fleet::accept::GuardedListener;
/// let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let mut listener = GuardedListener::new(tcp, 2, "/verify");
/// let _client = tokio::net::TcpStream::connect(listener.local_addr()?).await?;
/// let (_stream, _slot) = listener.accept().await; // the slot frees on drop
/// # Ok::<(), std::io::Error>(()) })?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct GuardedListener {
    tcp: TcpListener,
    slots: Arc<Semaphore>,
    failures: AcceptFailures,
}

impl GuardedListener {
    /// Serves at most `max_connections` (at least 1) connections of `tcp` at
    /// once; `what` names them in log lines (e.g. `/verify`).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let _listener = gym_metrics_examples::fleet::accept::GuardedListener::new(tcp, 256, "/verify");
    /// # Ok::<(), std::io::Error>(()) })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new(tcp: TcpListener, max_connections: usize, what: &'static str) -> Self {
        Self {
            tcp,
            slots: Arc::new(Semaphore::new(
                max_connections.clamp(1, Semaphore::MAX_PERMITS),
            )),
            failures: AcceptFailures::new(what),
        }
    }

    /// The address it listens on.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let listener = gym_metrics_examples::fleet::accept::GuardedListener::new(tcp, 1, "/verify");
    /// assert!(listener.local_addr()?.ip().is_loopback());
    /// # Ok::<(), std::io::Error>(()) })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    /// The socket's address cannot be read.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }

    /// The next connection and its [`Slot`], once a slot is free. A failed
    /// accept is logged (rate-limited) and retried after [`ACCEPT_PAUSE`].
    /// Cancel-safe: dropping the future loses no connection.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// # let mut listener = gym_metrics_examples::fleet::accept::GuardedListener::new(tcp, 1, "/verify");
    /// let _a = tokio::net::TcpStream::connect(listener.local_addr()?).await?;
    /// let _b = tokio::net::TcpStream::connect(listener.local_addr()?).await?;
    /// let first = listener.accept().await;
    /// // One slot: the second connection waits until the first is done.
    /// let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), listener.accept());
    /// assert!(waiting.await.is_err());
    /// drop(first);
    /// let _second = listener.accept().await;
    /// # Ok::<(), std::io::Error>(()) })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn accept(&mut self) -> (TcpStream, Slot) {
        loop {
            let Ok(slot) = Arc::clone(&self.slots).acquire_owned().await else {
                // Never: the semaphore is this listener's own and nothing closes it.
                return std::future::pending().await;
            };
            match self.tcp.accept().await {
                Ok((stream, _peer)) => {
                    if let Some(all_clear) = self.failures.succeeded() {
                        log::info!(target: LOG_TARGET, "{all_clear}");
                    }
                    return (stream, slot);
                }
                Err(e) => {
                    drop(slot);
                    if let Some(warning) = self.failures.failed(&e, Instant::now()) {
                        log::warn!(target: LOG_TARGET, "{warning}");
                    }
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                }
            }
        }
    }
}

/// Failed accepts since the last warning, and when that was.
#[derive(Debug)]
struct AcceptFailures {
    what: &'static str,
    last_warning: Option<Instant>,
    unreported: u64,
    warned: bool,
}

impl AcceptFailures {
    fn new(what: &'static str) -> Self {
        Self {
            what,
            last_warning: None,
            unreported: 0,
            warned: false,
        }
    }

    /// Counts a failed accept at `now`; the warning to log, if one is due.
    fn failed(&mut self, error: &io::Error, now: Instant) -> Option<String> {
        self.unreported += 1;
        let due = self
            .last_warning
            .is_none_or(|at| now.duration_since(at) >= WARN_EVERY);
        if !due {
            return None;
        }
        let earlier = std::mem::take(&mut self.unreported) - 1;
        self.last_warning = Some(now);
        self.warned = true;
        let meanwhile = if earlier > 0 {
            format!(" (and {earlier} more since the last warning)")
        } else {
            String::new()
        };
        Some(format!(
            "accepting a {} connection failed{meanwhile}: {error}; the open connections are still served and accepting is retried every {ACCEPT_PAUSE:?}; if it goes on, raise the open-files limit (ulimit -n) (logged at most every {WARN_EVERY:?})",
            self.what
        ))
    }

    /// Counts a successful accept; the all-clear to log after a warning.
    fn succeeded(&mut self) -> Option<String> {
        if !std::mem::take(&mut self.warned) {
            return None;
        }
        let unreported = std::mem::take(&mut self.unreported);
        Some(format!(
            "accepting {} connections again ({unreported} more failed after the last warning)",
            self.what
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emfile() -> io::Error {
        io::Error::from_raw_os_error(24)
    }

    #[test]
    fn one_warning_per_interval_then_one_all_clear() {
        let mut f = AcceptFailures::new("/verify");
        let t0 = Instant::now();
        let first = f.failed(&emfile(), t0).unwrap();
        assert!(
            first.contains("accepting a /verify connection failed: "),
            "{first}"
        );
        assert!(first.contains("os error 24"), "{first}");
        // A failure every pause for just under the interval: all quiet.
        let quiet = (1..100)
            .filter_map(|i| f.failed(&emfile(), t0 + ACCEPT_PAUSE * i))
            .count();
        assert_eq!(quiet, 0);
        let second = f.failed(&emfile(), t0 + WARN_EVERY).unwrap();
        assert!(
            second.contains("(and 99 more since the last warning)"),
            "{second}"
        );
        f.failed(&emfile(), t0 + WARN_EVERY + ACCEPT_PAUSE);
        let clear = f.succeeded().unwrap();
        assert!(clear.contains("again (1 more failed"), "{clear}");
        assert_eq!(f.succeeded(), None);
    }

    #[test]
    fn no_all_clear_without_a_warning() {
        let mut f = AcceptFailures::new("/verify");
        assert_eq!(f.succeeded(), None);
    }
}
