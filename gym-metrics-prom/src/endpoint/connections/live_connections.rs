//! The live connections, oldest first, and who makes room at the cap for a
//! new one:
//!
//! - never one whose request waits for its password check, or is in it: the
//!   line of checks is first in, first out and bounded
//!   (`web_security/basic_auth.rs`), and its place in that line is all a
//!   right password never seen before has during a flood of fresh wrong
//!   ones (issue 43: evicted while it waited, it was closed with no answer
//!   at all);
//! - else the oldest of those that go first (waiting for a request after an
//!   answer, answering a pipelined request, idle or busy for a second);
//! - else the oldest past its first [`GRACE_MS`], whatever it is doing;
//! - else nobody yet: the new connection waits, and nothing more is accepted
//!   (the others wait in the kernel's queue, in the order they came), until
//!   one may go: [`GRACE_MS`] at most, or until a password check ends.
//!
//! So a new connection is never refused and no client can pin a slot; each
//! gets [`GRACE_MS`] to send its request (with TLS, to shake hands first)
//! before it can be made room for, and a connection that sent a request
//! needing a password check is answered (200, 401, or 429 once it waited
//! too long), never closed unanswered.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::connection_state::{Clock, ConnectionState};

/// How long a connection may wait for a request, or for its answer to be
/// written out, before it goes first at the cap (ms): a scraper sends its
/// request as soon as it has connected (and, with TLS, shaken hands), and
/// reads its answer as it comes.
const SLOW_MS: u64 = 1_000;

/// A new connection's time to send its request before it may be made room
/// for (ms): a loopback or LAN scraper's handshake and request take a few
/// milliseconds. Short, so that connections that send nothing delay the
/// next one by this at most: 70 of them ahead of a scrape in the kernel's
/// queue, under a cap of 12, delay it by 6 × 100 ms.
const GRACE_MS: u64 = 100;

/// A connection just accepted, registered; `evicted`, told to close, made
/// room for it.
#[derive(Debug)]
pub(crate) struct Admission {
    pub(crate) state: Arc<ConnectionState>,
    pub(crate) evicted: Option<Arc<ConnectionState>>,
}

/// Live connections by id; ids grow, so the first is the oldest.
#[derive(Debug, Default)]
pub(crate) struct LiveConnections {
    live: Mutex<BTreeMap<u64, Arc<ConnectionState>>>,
    next_id: AtomicU64,
    /// Notified when the last connection leaves (for the drain at shutdown).
    emptied: Notify,
    /// Notified when a connection leaves or its password check ends: there
    /// may be room for the one waiting to be admitted.
    changed: Notify,
}

impl LiveConnections {
    /// Registers a new connection once there is room for it: below `cap`,
    /// or at `cap` once one may make room (it is evicted). Cancel-safe: it
    /// registers only in the poll that returns.
    pub(crate) async fn admit(&self, cap: usize, clock: Clock) -> Admission {
        loop {
            // `notify_one` keeps a permit when nobody waits: no wake-up is lost.
            let changed = self.changed.notified();
            match self.try_admit(cap, clock, clock.now_ms()) {
                Ok(admission) => return admission,
                Err(Some(at_ms)) => {
                    tokio::select! {
                        () = changed => {}
                        () = tokio::time::sleep_until(clock.instant_at(at_ms)) => {}
                    }
                }
                Err(None) => changed.await,
            }
        }
    }

    /// Registers a new connection at `now_ms` if there is room; else when
    /// one may go next (ms), if time alone will tell (`None`: when a
    /// password check ends).
    fn try_admit(&self, cap: usize, clock: Clock, now_ms: u64) -> Result<Admission, Option<u64>> {
        let mut live = self.live();
        let mut evicted = None;
        if live.len() >= cap {
            let id = victim(&live, now_ms)?;
            if let Some(state) = live.remove(&id) {
                state.evict();
                evicted = Some(state);
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnectionState::new(id, clock));
        live.insert(id, Arc::clone(&state));
        Ok(Admission { state, evicted })
    }

    /// Marks `state`'s request as waiting for, then in, its password check
    /// until the guard drops: never evicted meanwhile.
    #[cfg(feature = "web-config")]
    pub(crate) fn checking<'a>(&'a self, state: &'a ConnectionState) -> Checking<'a> {
        state.set_checking(true);
        Checking {
            live_connections: self,
            state,
        }
    }

    /// Forgets a connection that ended (a no-op for one already evicted).
    pub(crate) fn remove(&self, id: u64) {
        let mut live = self.live();
        live.remove(&id);
        if live.is_empty() {
            self.emptied.notify_one();
        }
        self.changed.notify_one();
    }

    pub(crate) fn len(&self) -> usize {
        self.live().len()
    }

    /// Resolves when no connection is left.
    pub(crate) async fn emptied(&self) {
        while self.len() > 0 {
            self.emptied.notified().await;
        }
    }

    fn live(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<ConnectionState>>> {
        // Nothing panics while holding it; a poisoned map is still consistent.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Who makes room at `now_ms` (the module's rule); else when one may
/// (`None`: only when a password check ends).
fn victim(live: &BTreeMap<u64, Arc<ConnectionState>>, now_ms: u64) -> Result<u64, Option<u64>> {
    let may_go = || live.values().filter(|state| !state.is_checking());
    may_go()
        .find(|state| state.goes_first(now_ms, SLOW_MS))
        .or_else(|| may_go().find(|state| now_ms.saturating_sub(state.admitted_ms()) >= GRACE_MS))
        .map(|state| state.id())
        .ok_or_else(|| may_go().map(|state| state.admitted_ms() + GRACE_MS).min())
}

/// A request's password check, from its place in line to its verdict
/// ([`LiveConnections::checking`]); its end may make room.
#[cfg(feature = "web-config")]
pub(crate) struct Checking<'a> {
    live_connections: &'a LiveConnections,
    state: &'a ConnectionState,
}

#[cfg(feature = "web-config")]
impl Drop for Checking<'_> {
    fn drop(&mut self) {
        self.state.set_checking(false);
        self.live_connections.changed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Admits at `now_ms`; the new state and the evicted one's id, or when
    /// to look again.
    fn admit_at(
        live: &LiveConnections,
        cap: usize,
        clock: Clock,
        now_ms: u64,
    ) -> Result<(Arc<ConnectionState>, Option<u64>), Option<u64>> {
        let Admission { state, evicted } = live.try_admit(cap, clock, now_ms)?;
        Ok((state, evicted.map(|e| e.id())))
    }

    fn admit(
        live: &LiveConnections,
        cap: usize,
        clock: Clock,
    ) -> (Arc<ConnectionState>, Option<u64>) {
        // Well past every connection's grace.
        admit_at(live, cap, clock, clock.now_ms() + GRACE_MS).unwrap()
    }

    #[test]
    fn at_the_cap_one_waiting_for_a_request_goes_first_else_the_oldest_whatever_it_does() {
        let live = LiveConnections::default();
        let clock = Clock::start();
        let (first, _) = admit(&live, 3, clock);
        let (second, _) = admit(&live, 3, clock);
        let (third, _) = admit(&live, 3, clock);
        // All answering requests (or just connected): the oldest goes.
        let _busy_first = first.request_started();
        let busy_second = second.request_started();
        let (fourth, evicted) = admit(&live, 3, clock);
        assert_eq!(evicted, Some(first.id()));
        assert!(first.is_evicted() && !second.is_evicted() && !third.is_evicted());
        assert_eq!(live.len(), 3);
        // Removing an evicted connection again changes nothing.
        live.remove(first.id());
        assert_eq!(live.len(), 3);

        // The second's answer written out: it waits for a request and goes
        // before the third, older and still connecting.
        drop(busy_second);
        second.flushed();
        let (_, evicted) = admit(&live, 3, clock);
        assert_eq!(evicted, Some(second.id()));

        // Answering, or just connected: the oldest again.
        third.write_stalled();
        let _busy_fourth = fourth.request_started();
        let (_, evicted) = admit(&live, 3, clock);
        assert_eq!(evicted, Some(third.id()));
        assert_eq!(live.len(), 3);
    }

    #[test]
    fn a_new_connection_has_its_grace_and_then_the_one_after_it_waits_no_longer() {
        let live = LiveConnections::default();
        let clock = Clock::start();
        let (first, _) = admit_at(&live, 2, clock, 0).unwrap();
        let (second, _) = admit_at(&live, 2, clock, 0).unwrap();
        let at = first.admitted_ms();
        // Both within their grace: the third waits until the first's ends.
        let retry = admit_at(&live, 2, clock, at).unwrap_err();
        assert_eq!(retry, Some(at + GRACE_MS));
        assert_eq!(live.len(), 2);
        let (_, evicted) = admit_at(&live, 2, clock, at + GRACE_MS).unwrap();
        assert_eq!(evicted, Some(first.id()));
        assert!(!second.is_evicted());
    }

    #[cfg(feature = "web-config")]
    #[test]
    fn a_connection_in_its_password_check_is_never_evicted() {
        let live = LiveConnections::default();
        let clock = Clock::start();
        let (first, _) = admit(&live, 2, clock);
        let (second, _) = admit(&live, 2, clock);
        let later = clock.now_ms() + 10 * SLOW_MS;
        // The oldest, busy for ten seconds, waiting for its check: the
        // second goes instead.
        let _request = first.request_started();
        let checking = live.checking(&first);
        let (third, evicted) = admit_at(&live, 2, clock, later).unwrap();
        assert_eq!(evicted, Some(second.id()));
        // Every other one checking too: nobody goes, whatever the time,
        // until a check ends.
        let _request = third.request_started();
        let third_checking = live.checking(&third);
        assert_eq!(admit_at(&live, 2, clock, later).unwrap_err(), None);
        drop(checking);
        let (_, evicted) = admit_at(&live, 2, clock, later).unwrap();
        assert_eq!(evicted, Some(first.id()));
        drop(third_checking);
    }

    #[cfg(feature = "web-config")]
    #[test]
    fn the_admission_waits_for_a_connection_to_leave() {
        let live = Arc::new(LiveConnections::default());
        let clock = Clock::start();
        let (first, _) = admit(&live, 1, clock);
        let _checking = live.checking(&first);
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(async {
                let waiting = {
                    let live = Arc::clone(&live);
                    tokio::spawn(async move { live.admit(1, clock).await.evicted.is_none() })
                };
                tokio::task::yield_now().await;
                assert!(!waiting.is_finished(), "admitted over the cap");
                live.remove(first.id());
                assert!(waiting.await.unwrap(), "room came without an eviction");
            });
    }

    #[test]
    fn below_the_cap_nobody_is_evicted() {
        let live = LiveConnections::default();
        let clock = Clock::start();
        for _ in 0..5 {
            let (state, evicted) = admit(&live, 5, clock);
            assert!(evicted.is_none() && !state.is_evicted());
        }
        assert_eq!(live.len(), 5);
    }
}
