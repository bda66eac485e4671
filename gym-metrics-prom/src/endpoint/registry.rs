//! The live connections, oldest first, and who makes room at the cap for a
//! new one: the oldest of those that go first (waiting for a request after
//! an answer, answering a pipelined request, idle or busy for a second),
//! else the oldest, whatever it is doing. A new connection is never
//! refused, so no client can pin a slot, and what is left to a scraper's
//! connection, just made or being answered, is to be the oldest of those.

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

/// A connection just accepted, registered; `evicted`, told to close, made
/// room for it.
#[derive(Debug)]
pub(crate) struct Admission {
    pub(crate) state: Arc<ConnectionState>,
    pub(crate) evicted: Option<Arc<ConnectionState>>,
}

/// Live connections by id; ids grow, so the first is the oldest.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    live: Mutex<BTreeMap<u64, Arc<ConnectionState>>>,
    next_id: AtomicU64,
    /// Notified when the last connection leaves (for the drain at shutdown).
    emptied: Notify,
}

impl Registry {
    /// Registers a new connection, at `cap` after evicting one.
    pub(crate) fn admit(&self, cap: usize, clock: Clock) -> Admission {
        let mut live = self.live();
        let mut evicted = None;
        if live.len() >= cap {
            let now = clock.now_ms();
            let victim = live
                .iter()
                .find(|(_, state)| state.goes_first(now, SLOW_MS))
                .or_else(|| live.iter().next())
                .map(|(&id, _)| id);
            if let Some(state) = victim.and_then(|id| live.remove(&id)) {
                state.evict();
                evicted = Some(state);
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnectionState::new(id, clock));
        live.insert(id, Arc::clone(&state));
        Admission { state, evicted }
    }

    /// Forgets a connection that ended (a no-op for one already evicted).
    pub(crate) fn remove(&self, id: u64) {
        let mut live = self.live();
        live.remove(&id);
        if live.is_empty() {
            self.emptied.notify_one();
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(registry: &Registry, cap: usize, clock: Clock) -> (Arc<ConnectionState>, Option<u64>) {
        let Admission { state, evicted } = registry.admit(cap, clock);
        (state, evicted.map(|e| e.id()))
    }

    #[test]
    fn at_the_cap_one_waiting_for_a_request_goes_first_else_the_oldest_whatever_it_does() {
        let registry = Registry::default();
        let clock = Clock::start();
        let (first, _) = admit(&registry, 3, clock);
        let (second, _) = admit(&registry, 3, clock);
        let (third, _) = admit(&registry, 3, clock);
        // All answering requests (or just connected): the oldest goes.
        let _busy_first = first.request_started();
        let busy_second = second.request_started();
        let (fourth, evicted) = admit(&registry, 3, clock);
        assert_eq!(evicted, Some(first.id()));
        assert!(first.is_evicted() && !second.is_evicted() && !third.is_evicted());
        assert_eq!(registry.len(), 3);
        // Removing an evicted connection again changes nothing.
        registry.remove(first.id());
        assert_eq!(registry.len(), 3);

        // The second's answer written out: it waits for a request and goes
        // before the third, older and still connecting.
        drop(busy_second);
        second.flushed();
        let (_, evicted) = admit(&registry, 3, clock);
        assert_eq!(evicted, Some(second.id()));

        // Answering, or just connected: the oldest again.
        third.write_stalled();
        let _busy_fourth = fourth.request_started();
        let (_, evicted) = admit(&registry, 3, clock);
        assert_eq!(evicted, Some(third.id()));
        assert_eq!(registry.len(), 3);
    }

    #[test]
    fn below_the_cap_nobody_is_evicted() {
        let registry = Registry::default();
        let clock = Clock::start();
        for _ in 0..5 {
            let (state, evicted) = admit(&registry, 5, clock);
            assert!(evicted.is_none() && !state.is_evicted());
        }
        assert_eq!(registry.len(), 5);
    }
}
