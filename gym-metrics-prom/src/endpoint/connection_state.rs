//! What one connection is doing, as its request handler, its socket wrapper,
//! its watchdog and the registry (choosing whom to evict) see it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::futures::Notified;
use tokio::sync::Notify;

use super::limits::Limits;

/// Milliseconds since the endpoint started: times that fit an atomic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    epoch: Instant,
}

impl Clock {
    pub(crate) fn start() -> Self {
        Self {
            epoch: Instant::now(),
        }
    }

    pub(crate) fn now_ms(self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The instant `ms` after the epoch, for tokio's timers.
    pub(crate) fn instant_at(self, ms: u64) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch + Duration::from_millis(ms))
    }
}

/// Why a connection's watchdog closes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// No request in progress for the idle timeout.
    Idle,
    /// A response write accepted no byte for the write timeout.
    WriteStalled,
}

const NOT_STALLED: u64 = u64::MAX;

/// One live connection's state; shared, all on the endpoint's thread but
/// for the guard reading the registry's size.
#[derive(Debug)]
pub(crate) struct ConnectionState {
    id: u64,
    clock: Clock,
    requests_in_progress: AtomicU32,
    /// The last accept, request start or end, or byte written.
    last_progress_ms: AtomicU64,
    /// Since when a write has been waiting for the client's socket.
    write_stalled_since_ms: AtomicU64,
    /// A final scrape's last frame went to hyper, its bytes not yet to the socket.
    final_scrape_unflushed: AtomicBool,
    evicted: AtomicBool,
    /// Woken when the watchdog must look again (idle from now, stalled, evicted).
    changed: Notify,
    /// Set, and notified, once the task has ended and its socket is closed.
    closed: AtomicBool,
    closed_notify: Notify,
}

impl ConnectionState {
    pub(crate) fn new(id: u64, clock: Clock) -> Self {
        Self {
            id,
            clock,
            requests_in_progress: AtomicU32::new(0),
            last_progress_ms: AtomicU64::new(clock.now_ms()),
            write_stalled_since_ms: AtomicU64::new(NOT_STALLED),
            final_scrape_unflushed: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            changed: Notify::new(),
            closed: AtomicBool::new(false),
            closed_notify: Notify::new(),
        }
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// No request in progress and nothing waiting to be written: what may be
    /// evicted, and what the idle timeout applies to.
    pub(crate) fn is_idle(&self) -> bool {
        self.requests_in_progress.load(Ordering::Relaxed) == 0
            && self.write_stalled_since_ms.load(Ordering::Relaxed) == NOT_STALLED
            && !self.final_scrape_unflushed.load(Ordering::Relaxed)
    }

    /// A request's head was read; in progress until the guard (held by the
    /// response body) is dropped, i.e. hyper is done with the response.
    pub(crate) fn request_started(self: &Arc<Self>) -> RequestInProgress {
        self.requests_in_progress.fetch_add(1, Ordering::Relaxed);
        self.progressed();
        RequestInProgress(Arc::clone(self))
    }

    /// The client's socket took one byte or more.
    pub(crate) fn wrote(&self) {
        self.write_stalled_since_ms
            .store(NOT_STALLED, Ordering::Relaxed);
        self.progressed();
    }

    /// A write found the client's socket full.
    pub(crate) fn write_stalled(&self) {
        let now = self.clock.now_ms();
        if self
            .write_stalled_since_ms
            .compare_exchange(NOT_STALLED, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.changed.notify_one();
        }
    }

    /// Everything hyper wrote went to the socket. True once after a final
    /// scrape's last frame was handed over: that scrape is now answered.
    pub(crate) fn flushed(&self) -> bool {
        self.final_scrape_unflushed.swap(false, Ordering::Relaxed)
    }

    /// Closes this connection at its watchdog's next look.
    pub(crate) fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    pub(crate) fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// The connection's task has ended: its socket is closed.
    pub(crate) fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
        self.closed_notify.notify_one();
    }

    /// Resolves once the connection's socket is closed.
    pub(crate) async fn wait_closed(&self) {
        while !self.closed.load(Ordering::Acquire) {
            self.closed_notify.notified().await;
        }
    }

    /// Resolves when the watchdog must look again.
    pub(crate) fn changed(&self) -> Notified<'_> {
        self.changed.notified()
    }

    /// When a timeout could next expire (ms), if any: `None` while a request
    /// is being answered without a stalled write (the end of that request
    /// wakes the watchdog).
    pub(crate) fn next_expiry_ms(&self, limits: &Limits) -> Option<u64> {
        let stalled = self.write_stalled_since_ms.load(Ordering::Relaxed);
        if stalled != NOT_STALLED {
            return Some(stalled.saturating_add(millis(limits.write_timeout)));
        }
        if self.is_idle() {
            let last = self.last_progress_ms.load(Ordering::Relaxed);
            return Some(last.saturating_add(millis(limits.idle_timeout)));
        }
        None
    }

    /// Which timeout has expired at `now_ms`, if one has.
    pub(crate) fn expired(&self, limits: &Limits, now_ms: u64) -> Option<Expiry> {
        let stalled = self.write_stalled_since_ms.load(Ordering::Relaxed);
        if stalled != NOT_STALLED {
            return (now_ms.saturating_sub(stalled) >= millis(limits.write_timeout))
                .then_some(Expiry::WriteStalled);
        }
        let last = self.last_progress_ms.load(Ordering::Relaxed);
        (self.is_idle() && now_ms.saturating_sub(last) >= millis(limits.idle_timeout))
            .then_some(Expiry::Idle)
    }

    pub(crate) fn clock(&self) -> Clock {
        self.clock
    }

    fn progressed(&self) {
        self.last_progress_ms
            .store(self.clock.now_ms(), Ordering::Relaxed);
    }
}

/// A request in progress on its connection; dropped with the response body.
#[derive(Debug)]
pub(crate) struct RequestInProgress(Arc<ConnectionState>);

impl RequestInProgress {
    /// This response is a final scrape, and hyper has just taken its last
    /// frame: it is answered once its bytes are flushed to the socket.
    pub(crate) fn final_scrape_handed_over(&self) {
        self.0.final_scrape_unflushed.store(true, Ordering::Relaxed);
    }
}

impl Drop for RequestInProgress {
    fn drop(&mut self) {
        self.0.requests_in_progress.fetch_sub(1, Ordering::Relaxed);
        self.0.progressed();
        self.0.changed.notify_one();
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::for_descriptor_limit(64)
    }

    #[test]
    fn idle_until_a_request_starts_and_again_when_its_response_is_done() {
        let state = Arc::new(ConnectionState::new(1, Clock::start()));
        assert!(state.is_idle());
        let request = state.request_started();
        assert!(!state.is_idle());
        assert_eq!(state.next_expiry_ms(&limits()), None);
        drop(request);
        assert!(state.is_idle());
    }

    #[test]
    fn idle_expires_after_the_idle_timeout_a_stalled_write_after_the_write_timeout() {
        let l = limits();
        let state = Arc::new(ConnectionState::new(1, Clock::start()));
        let start = state.last_progress_ms.load(Ordering::Relaxed);
        let idle = millis(l.idle_timeout);
        assert_eq!(state.next_expiry_ms(&l), Some(start + idle));
        assert_eq!(state.expired(&l, start + idle - 1), None);
        assert_eq!(state.expired(&l, start + idle), Some(Expiry::Idle));

        // A request in progress is never idle, however long it takes.
        let request = state.request_started();
        let begun = state.last_progress_ms.load(Ordering::Relaxed);
        assert_eq!(state.expired(&l, begun + 10 * idle), None);

        // A write that stalls: not idle, and expires by the write timeout.
        state.write_stalled();
        let stalled = state.write_stalled_since_ms.load(Ordering::Relaxed);
        drop(request);
        assert!(!state.is_idle(), "stalled bytes are still in progress");
        let write = millis(l.write_timeout);
        assert_eq!(state.next_expiry_ms(&l), Some(stalled + write));
        assert_eq!(state.expired(&l, stalled + write - 1), None);
        assert_eq!(
            state.expired(&l, stalled + write),
            Some(Expiry::WriteStalled)
        );

        // A byte accepted: the stall is over, the connection idle again,
        // its idle time counted from that byte.
        state.wrote();
        assert!(state.is_idle());
        let last = state.last_progress_ms.load(Ordering::Relaxed);
        assert!(last >= stalled);
        assert_eq!(state.expired(&l, last + idle - 1), None);
        assert_eq!(state.expired(&l, last + idle), Some(Expiry::Idle));
    }

    #[test]
    fn a_final_scrape_counts_once_when_flushed() {
        let state = Arc::new(ConnectionState::new(1, Clock::start()));
        assert!(!state.flushed());
        let request = state.request_started();
        request.final_scrape_handed_over();
        drop(request);
        assert!(!state.is_idle(), "its bytes are not on the socket yet");
        assert!(state.flushed());
        assert!(!state.flushed());
        assert!(state.is_idle());
    }
}
