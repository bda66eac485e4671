//! The live connections, oldest first, and who gets in at the cap: the
//! oldest connection with no request in progress makes room for a new one;
//! when every connection is answering a request, the new one is refused.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::connection_state::{Clock, ConnectionState};

/// What became of a connection just accepted.
#[derive(Debug)]
pub(crate) enum Admission {
    /// Registered; `evicted`, told to close, made room for it.
    Admitted {
        state: Arc<ConnectionState>,
        evicted: Option<Arc<ConnectionState>>,
    },
    /// At the cap with no idle connection: close it at once.
    Refused,
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
    /// Registers a new connection if there is room, or room can be made, under `cap`.
    pub(crate) fn admit(&self, cap: usize, clock: Clock) -> Admission {
        let mut live = self.live();
        let mut evicted = None;
        if live.len() >= cap {
            let oldest_idle = live
                .iter()
                .find(|(_, state)| state.is_idle())
                .map(|(&id, _)| id);
            match oldest_idle.and_then(|id| live.remove(&id)) {
                Some(state) => {
                    state.evict();
                    evicted = Some(state);
                }
                None => return Admission::Refused,
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnectionState::new(id, clock));
        live.insert(id, Arc::clone(&state));
        Admission::Admitted { state, evicted }
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

    fn admitted(a: Admission) -> (Arc<ConnectionState>, bool) {
        match a {
            Admission::Admitted { state, evicted } => (state, evicted.is_some()),
            Admission::Refused => panic!("refused"),
        }
    }

    #[test]
    fn at_the_cap_the_oldest_idle_connection_makes_room_else_the_new_one_is_refused() {
        let registry = Registry::default();
        let clock = Clock::start();
        let (first, _) = admitted(registry.admit(3, clock));
        let (second, _) = admitted(registry.admit(3, clock));
        let (third, _) = admitted(registry.admit(3, clock));
        // The oldest is answering a request: the next oldest idle one goes.
        let busy = first.request_started();
        let (fourth, evicted) = admitted(registry.admit(3, clock));
        assert!(evicted);
        assert!(second.is_evicted() && !first.is_evicted() && !third.is_evicted());
        assert_eq!(registry.len(), 3);
        // Removing an evicted connection again changes nothing.
        registry.remove(second.id());
        assert_eq!(registry.len(), 3);

        // Every connection busy: refused, nobody evicted.
        let _busy_third = third.request_started();
        let _busy_fourth = fourth.request_started();
        assert!(matches!(registry.admit(3, clock), Admission::Refused));
        assert!(!first.is_evicted() && !third.is_evicted() && !fourth.is_evicted());

        // A response done: that connection is idle and may go.
        drop(busy);
        let (_, evicted) = admitted(registry.admit(3, clock));
        assert!(evicted && first.is_evicted());
    }

    #[test]
    fn below_the_cap_nobody_is_evicted() {
        let registry = Registry::default();
        let clock = Clock::start();
        for _ in 0..5 {
            let (state, evicted) = admitted(registry.admit(5, clock));
            assert!(!evicted && !state.is_evicted());
        }
        assert_eq!(registry.len(), 5);
    }
}
