//! The process-wide recorder cell and the gate in front of it.
//!
//! One cell holds the install's state and its slot, in the shape `log` and
//! `metrics` use: [`set`] moves the state from uninitialised through
//! initialising to initialised exactly once, filling the slot in between,
//! and [`try_load`] reads the state (one acquire load and a branch) before it
//! reads the slot. The `off` feature's gate is folded into [`try_load`], so
//! the facade asks one function whether there is a recorder to call, and
//! under `off` the answer is a constant `None`.
//!
//! The facade and the install both depend on this file; it depends on
//! neither.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::compiled_off::COMPILED_OFF;
use crate::recorder::Recorder;

/// No recorder, and no install under way.
const UNINITIALIZED: u8 = 0;
/// An install won the state and is filling the slot; readers see nothing yet.
const INITIALIZING: u8 = 1;
/// The slot is filled, for good.
const INITIALIZED: u8 = 2;

/// The state and the slot it guards.
struct RecorderCell {
    state: AtomicU8,
    /// Filled before the state says INITIALIZED (not an `Option`: the
    /// state already says whether it is filled, and a record call then
    /// needs no second test).
    slot: UnsafeCell<MaybeUninit<&'static dyn Recorder>>,
}

// SAFETY: the slot is written once, by the one thread whose exchange moved
// the state from UNINITIALIZED to INITIALIZING, before that thread publishes
// INITIALIZED with a release store; it is read only after an acquire load
// has seen INITIALIZED, and never written again. The recorder it points to
// is `Send + Sync` (a supertrait of `Recorder`).
unsafe impl Sync for RecorderCell {}

static CELL: RecorderCell = RecorderCell::new();

impl RecorderCell {
    const fn new() -> Self {
        Self {
            state: AtomicU8::new(UNINITIALIZED),
            slot: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    fn set<R: Recorder>(&self, recorder: R) -> Result<&'static dyn Recorder, R> {
        if self
            .state
            .compare_exchange(
                UNINITIALIZED,
                INITIALIZING,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return Err(recorder);
        }
        // Leaked on purpose: record calls hold `&'static` references to it.
        let recorder: &'static dyn Recorder = Box::leak(Box::new(recorder));
        // SAFETY: winning the exchange makes this the slot's only writer, and
        // no reader touches the slot before INITIALIZED is published below.
        unsafe { (*self.slot.get()).write(recorder) };
        self.state.store(INITIALIZED, Ordering::Release);
        Ok(recorder)
    }

    #[inline(always)]
    fn load(&self) -> Option<&'static dyn Recorder> {
        if self.state.load(Ordering::Acquire) != INITIALIZED {
            return None;
        }
        // SAFETY: the acquire load saw INITIALIZED, stored (release) after
        // the slot's only write, so the slot is filled and stays as it is.
        Some(unsafe { (*self.slot.get()).assume_init() })
    }
}

/// Fills the cell with `recorder`, once per process; a later (or a
/// concurrent, losing) call gets its recorder back.
pub(crate) fn set<R: Recorder>(recorder: R) -> Result<&'static dyn Recorder, R> {
    CELL.set(recorder)
}

/// The recorder a record call goes to: `None` before an install, and always
/// `None` under the `off` feature (a constant, so the call compiles away).
#[inline(always)]
pub(crate) fn try_load() -> Option<&'static dyn Recorder> {
    if COMPILED_OFF {
        return None;
    }
    CELL.load()
}

/// The installed recorder, whatever `off` says: start-up code reads the
/// declared role under `off` too ([`crate::role()`]).
#[inline]
pub(crate) fn installed() -> Option<&'static dyn Recorder> {
    CELL.load()
}

#[cfg(test)]
mod tests {
    use super::RecorderCell;
    use crate::backend::{NoopRecorder, Recorder};
    use crate::Role;

    #[test]
    fn filled_once_and_the_loser_gets_its_recorder_back() {
        let cell = RecorderCell::new();
        assert!(cell.load().is_none());
        let first = cell.set(NoopRecorder::new(Role::orchestrator())).unwrap();
        let Err(late) = cell.set(NoopRecorder::new(Role::server("late-0", "agent"))) else {
            panic!("a second set must fail");
        };
        assert_eq!(late.role().name(), "late-0");
        let loaded = cell.load().expect("filled");
        assert!(std::ptr::addr_eq(loaded, first));
        assert!(loaded.role().is_orchestrator());
    }
}
