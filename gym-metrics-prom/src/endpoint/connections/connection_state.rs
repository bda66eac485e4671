//! What one connection is doing, as its request handler, its socket wrapper,
//! its watchdog and the live connections (`live_connections`, choosing whom
//! to evict) see it: idle (waiting for a request) or busy (from a request's
//! head until its answer is all on the socket), since when, whether a
//! request came pipelined, and whether it waits for (or is in) its password
//! check.

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
    /// Idle for the idle timeout.
    Idle,
    /// Busy for the response deadline: an answer not on the socket in time.
    ResponseDeadline,
}

const NOT_BUSY: u64 = u64::MAX;

/// One live connection's state; shared, all on the endpoint's thread but
/// for the guard reading how many connections are live.
///
/// Busy runs from a request's head (or a write that found the socket full)
/// to the first flush, with no request left in progress, that reaches the
/// socket: hyper and rustls flush the socket only once their own buffers
/// are empty, so the answer is then all in the kernel's hands. A byte the
/// client reads ends nothing: only the whole answer does.
#[derive(Debug)]
pub(crate) struct ConnectionState {
    id: u64,
    clock: Clock,
    /// When the connection was admitted (ms).
    admitted_ms: u64,
    /// Its request waits for, or is in, its password check (`LiveConnections::checking`).
    checking: AtomicBool,
    requests_in_progress: AtomicU32,
    /// Since when the connection has been busy; [`NOT_BUSY`] while idle.
    busy_since_ms: AtomicU64,
    /// Since when it has been idle: its admission, or its last answer written out.
    idle_since_ms: AtomicU64,
    /// An answer was written out: the connection waits for another request.
    answered: AtomicBool,
    /// A request came pipelined: its answer is the connection's last.
    closing: AtomicBool,
    /// Socket reads that brought bytes, and their count when it last went idle:
    /// a request read with no read since came before that answer was out.
    reads: AtomicU64,
    reads_when_idle: AtomicU64,
    /// A final scrape's last frame went to hyper, its bytes not yet to the socket.
    final_scrape_unflushed: AtomicBool,
    evicted: AtomicBool,
    /// Woken when the watchdog must look again: evicted.
    changed: Notify,
    /// Set, and notified, once the task has ended and its socket is closed.
    closed: AtomicBool,
    closed_notify: Notify,
}

impl ConnectionState {
    pub(crate) fn new(id: u64, clock: Clock) -> Self {
        let now = clock.now_ms();
        Self {
            id,
            clock,
            admitted_ms: now,
            checking: AtomicBool::new(false),
            requests_in_progress: AtomicU32::new(0),
            busy_since_ms: AtomicU64::new(NOT_BUSY),
            idle_since_ms: AtomicU64::new(now),
            answered: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            reads: AtomicU64::new(0),
            reads_when_idle: AtomicU64::new(0),
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

    /// Nothing in progress and nothing waiting to be written: what the idle
    /// timeout applies to, and what closes at once when the endpoint drains.
    pub(crate) fn is_idle(&self) -> bool {
        self.busy_since_ms.load(Ordering::Relaxed) == NOT_BUSY
    }

    /// What goes before any other at the cap: a connection waiting for a
    /// request after an answer (closing it cuts off nothing), one answering
    /// a pipelined request (it closes after that), and one idle or busy for
    /// at least `slow_ms` (no request, or a head that does not end; an
    /// answer its client does not read). What is left is a client that has
    /// just connected, or whose answer is being written: a scraper's.
    pub(crate) fn goes_first(&self, now_ms: u64, slow_ms: u64) -> bool {
        if self.closing.load(Ordering::Relaxed) {
            return true;
        }
        let busy = self.busy_since_ms.load(Ordering::Relaxed);
        let since = if busy == NOT_BUSY {
            if self.answered.load(Ordering::Relaxed) {
                return true;
            }
            self.idle_since_ms.load(Ordering::Relaxed)
        } else {
            busy
        };
        now_ms.saturating_sub(since) >= slow_ms
    }

    /// When the connection was admitted (ms since the endpoint started).
    pub(crate) fn admitted_ms(&self) -> u64 {
        self.admitted_ms
    }

    /// Its request waits for its password check, or is in it: never
    /// evicted meanwhile (the line's wait is bounded: `basic_auth`).
    pub(crate) fn is_checking(&self) -> bool {
        self.checking.load(Ordering::Relaxed)
    }

    #[cfg(feature = "web-config")]
    pub(crate) fn set_checking(&self, checking: bool) {
        self.checking.store(checking, Ordering::Relaxed);
    }

    /// A request's head was read; in progress until the guard (held by the
    /// response body) is dropped, i.e. hyper is done with the response. The
    /// guard tells whether it came pipelined: sent before the answer before
    /// it was all on the socket (the connection was still busy), or already
    /// buffered when it was (no socket read since).
    pub(crate) fn request_started(self: &Arc<Self>) -> RequestInProgress {
        let busy = !self.is_idle();
        let pipelined = busy
            || (self.answered.load(Ordering::Relaxed)
                && self.reads.load(Ordering::Relaxed)
                    == self.reads_when_idle.load(Ordering::Relaxed));
        if !busy {
            self.busy_since_ms
                .store(self.clock.now_ms(), Ordering::Relaxed);
        }
        if pipelined {
            self.closing.store(true, Ordering::Relaxed);
        }
        self.requests_in_progress.fetch_add(1, Ordering::Relaxed);
        RequestInProgress {
            state: Arc::clone(self),
            pipelined,
        }
    }

    /// The socket brought bytes.
    pub(crate) fn read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }

    /// A write found the client's socket full: busy until it is written out
    /// (a request was already, or it is hyper's own answer to a bad request).
    pub(crate) fn write_stalled(&self) {
        if self.is_idle() {
            self.busy_since_ms
                .store(self.clock.now_ms(), Ordering::Relaxed);
        }
    }

    /// Everything written so far is on the socket. With no request in
    /// progress the connection is idle again. True once after a final
    /// scrape's last frame was handed over: that scrape is now answered.
    pub(crate) fn flushed(&self) -> bool {
        let final_scrape = self.final_scrape_unflushed.swap(false, Ordering::Relaxed);
        if !self.is_idle() && self.requests_in_progress.load(Ordering::Relaxed) == 0 {
            self.reads_when_idle
                .store(self.reads.load(Ordering::Relaxed), Ordering::Relaxed);
            self.idle_since_ms
                .store(self.clock.now_ms(), Ordering::Relaxed);
            self.busy_since_ms.store(NOT_BUSY, Ordering::Relaxed);
        }
        final_scrape
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

    /// Resolves when the watchdog must look again before its timer.
    pub(crate) fn changed(&self) -> Notified<'_> {
        self.changed.notified()
    }

    /// When the current timeout expires (ms): the response deadline while
    /// busy, the idle timeout while idle. Never later than the one in force
    /// after a change, so a watchdog that slept until it and looks again
    /// misses none: busy starts after idle did, and idle after busy.
    pub(crate) fn next_expiry_ms(&self, limits: &Limits) -> u64 {
        let busy = self.busy_since_ms.load(Ordering::Relaxed);
        if busy != NOT_BUSY {
            return busy.saturating_add(millis(limits.response_deadline));
        }
        let idle = self.idle_since_ms.load(Ordering::Relaxed);
        idle.saturating_add(millis(limits.idle_timeout))
    }

    /// Which timeout has expired at `now_ms`, if one has.
    pub(crate) fn expired(&self, limits: &Limits, now_ms: u64) -> Option<Expiry> {
        let busy = self.busy_since_ms.load(Ordering::Relaxed);
        if busy != NOT_BUSY {
            return (now_ms.saturating_sub(busy) >= millis(limits.response_deadline))
                .then_some(Expiry::ResponseDeadline);
        }
        let idle = self.idle_since_ms.load(Ordering::Relaxed);
        (now_ms.saturating_sub(idle) >= millis(limits.idle_timeout)).then_some(Expiry::Idle)
    }

    pub(crate) fn clock(&self) -> Clock {
        self.clock
    }
}

/// A request in progress on its connection; dropped with the response body.
#[derive(Debug)]
pub(crate) struct RequestInProgress {
    state: Arc<ConnectionState>,
    pipelined: bool,
}

impl RequestInProgress {
    /// Sent before the answer before it was on the socket: answered, and
    /// then the connection closes (one answer at a time per connection).
    pub(crate) fn pipelined(&self) -> bool {
        self.pipelined
    }

    /// This response is a final scrape, and hyper has just taken its last
    /// frame: it is answered once its bytes are flushed to the socket.
    pub(crate) fn final_scrape_handed_over(&self) {
        self.state
            .final_scrape_unflushed
            .store(true, Ordering::Relaxed);
    }
}

impl Drop for RequestInProgress {
    fn drop(&mut self) {
        // Idle again at the flush that puts its last bytes on the socket.
        self.state
            .requests_in_progress
            .fetch_sub(1, Ordering::Relaxed);
        self.state.answered.store(true, Ordering::Relaxed);
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

    fn state() -> Arc<ConnectionState> {
        Arc::new(ConnectionState::new(1, Clock::start()))
    }

    #[test]
    fn busy_from_a_request_until_its_answer_is_flushed() {
        let state = state();
        assert!(state.is_idle());
        let request = state.request_started();
        assert!(!state.is_idle() && !request.pipelined());
        drop(request);
        assert!(!state.is_idle(), "hyper may still hold its bytes");
        state.flushed();
        assert!(state.is_idle());
    }

    #[test]
    fn the_deadline_runs_from_the_request_and_no_byte_written_restarts_it() {
        let l = limits();
        let state = state();
        let idle_since = state.idle_since_ms.load(Ordering::Relaxed);
        let idle = millis(l.idle_timeout);
        assert_eq!(state.next_expiry_ms(&l), idle_since + idle);
        assert_eq!(state.expired(&l, idle_since + idle - 1), None);
        assert_eq!(state.expired(&l, idle_since + idle), Some(Expiry::Idle));

        let request = state.request_started();
        let begun = state.busy_since_ms.load(Ordering::Relaxed);
        let deadline = millis(l.response_deadline);
        assert_eq!(state.next_expiry_ms(&l), begun + deadline);
        // The socket full, then taking a little at a time: still the same deadline.
        state.write_stalled();
        drop(request);
        state.write_stalled();
        assert_eq!(state.busy_since_ms.load(Ordering::Relaxed), begun);
        assert_eq!(state.expired(&l, begun + deadline - 1), None);
        assert_eq!(
            state.expired(&l, begun + deadline),
            Some(Expiry::ResponseDeadline)
        );

        // All of it on the socket: idle, its idle time counted from then.
        state.flushed();
        let idle_since = state.idle_since_ms.load(Ordering::Relaxed);
        assert!(idle_since >= begun);
        assert_eq!(state.expired(&l, idle_since + idle - 1), None);
        assert_eq!(state.expired(&l, idle_since + idle), Some(Expiry::Idle));
    }

    #[test]
    fn a_write_stalled_outside_a_request_is_busy_too() {
        let state = state();
        state.write_stalled();
        assert!(!state.is_idle());
        state.flushed();
        assert!(state.is_idle());
    }

    #[test]
    fn a_request_sent_before_the_answer_before_it_was_out_is_pipelined() {
        let state = state();
        state.read();
        // The first request of a connection never is.
        let first = state.request_started();
        assert!(!first.pipelined());
        drop(first);

        // The next one while that answer waits for the socket: pipelined.
        let second = state.request_started();
        assert!(second.pipelined());
        drop(second);
        state.flushed();

        // The next one already buffered when the answer went out (no read since).
        let third = state.request_started();
        assert!(third.pipelined());
        drop(third);
        state.flushed();

        // One the client sent after reading its answer came with a read.
        state.read();
        let fourth = state.request_started();
        assert!(!fourth.pipelined());
    }

    #[test]
    fn first_to_go_after_an_answer_when_pipelining_or_after_a_slow_second() {
        let state = state();
        let since = state.idle_since_ms.load(Ordering::Relaxed);
        // Just connected: not yet; no request for a second: first.
        assert!(!state.goes_first(since, 1000));
        assert!(state.goes_first(since + 1000, 1000));
        // Answering: not for a second, then first (its client reads not).
        let request = state.request_started();
        let begun = state.busy_since_ms.load(Ordering::Relaxed);
        assert!(!state.goes_first(begun + 999, 1000));
        assert!(state.goes_first(begun + 1000, 1000));
        drop(request);
        // Answered, waiting for another request: first at once.
        state.flushed();
        assert!(state.goes_first(0, 1000));
        // A pipelined request's answer is its last: first at once.
        let state = self::state();
        drop(state.request_started());
        let pipelined = state.request_started();
        assert!(pipelined.pipelined() && state.goes_first(0, 1000));
    }

    #[test]
    fn a_final_scrape_counts_once_when_flushed() {
        let state = state();
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
