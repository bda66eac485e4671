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
//! The recorder's span groups ([`Recorder::span_groups`]) live in the same
//! word as the state, above its two low bits, published by the same release
//! store: [`try_load_for`] asks "installed, and is this group on?" with one
//! acquire load and one bit test (a group's bit is never set before the
//! install is complete).
//!
//! The facade and the install both depend on this file; it depends on
//! neither.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU16, Ordering};

use crate::compiled_off::COMPILED_OFF;
use crate::recorder::Recorder;
use crate::span_groups::Group;

/// No recorder, and no install under way.
const UNINITIALIZED: u16 = 0;
/// An install won the state and is filling the slot; readers see nothing yet.
const INITIALIZING: u16 = 1;
/// The slot is filled, for good.
const INITIALIZED: u16 = 2;
/// The bits of the state word that hold the state; the span groups' mask
/// sits above them.
const STATE_BITS: u16 = 0b11;
/// How far the span groups' mask is shifted in the state word.
const GROUPS_SHIFT: u32 = 8;

/// The state word's bit for `group`.
#[inline(always)]
const fn group_bit(group: Group) -> u16 {
    (group.bit() as u16) << GROUPS_SHIFT
}

/// The state (and, once initialised, the span groups) and the slot it guards.
struct RecorderCell {
    state: AtomicU16,
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
            state: AtomicU16::new(UNINITIALIZED),
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
        let groups = u16::from(recorder.span_groups().bits()) << GROUPS_SHIFT;
        // Leaked on purpose: record calls hold `&'static` references to it.
        let recorder: &'static dyn Recorder = Box::leak(Box::new(recorder));
        // SAFETY: winning the exchange makes this the slot's only writer, and
        // no reader touches the slot before INITIALIZED is published below.
        unsafe { (*self.slot.get()).write(recorder) };
        self.state.store(INITIALIZED | groups, Ordering::Release);
        Ok(recorder)
    }

    #[inline(always)]
    fn load(&self) -> Option<&'static dyn Recorder> {
        if self.state.load(Ordering::Acquire) & STATE_BITS != INITIALIZED {
            return None;
        }
        // SAFETY: the acquire load saw INITIALIZED, stored (release) after
        // the slot's only write, so the slot is filled and stays as it is.
        Some(unsafe { (*self.slot.get()).assume_init() })
    }

    /// [`RecorderCell::load`], and `None` too when `group` is off: one load
    /// and one bit test. A group's bit is only ever stored together with
    /// INITIALIZED (by [`RecorderCell::set`]'s one release store), so the
    /// bit alone says both "installed" and "this group is on".
    #[inline(always)]
    fn load_for(&self, group: Group) -> Option<&'static dyn Recorder> {
        if self.state.load(Ordering::Acquire) & group_bit(group) == 0 {
            return None;
        }
        // SAFETY: the acquire load saw a group bit, which is stored (release)
        // only with INITIALIZED, after the slot's only write, so the slot is
        // filled and stays as it is.
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

/// The recorder a record call of `group` goes to: `None` before an install,
/// when the installed recorder's span groups leave `group` out, and always
/// under the `off` feature.
#[inline(always)]
pub(crate) fn try_load_for(group: Group) -> Option<&'static dyn Recorder> {
    if COMPILED_OFF {
        return None;
    }
    CELL.load_for(group)
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
    use crate::backend::{NoopRecorder, Recorder, SpanGroups};
    use crate::{Group, Role};

    #[test]
    fn the_groups_travel_with_the_state() {
        let cell = RecorderCell::new();
        assert!(cell.load_for(Group::Rollout).is_none(), "nothing installed");
        let groups = SpanGroups::DEFAULT_PRESET;
        cell.set(NoopRecorder::new(Role::server("s-0", "resources")).with_span_groups(groups))
            .unwrap();
        for group in Group::ALL {
            assert_eq!(
                cell.load_for(group).is_some(),
                groups.contains(group),
                "{group:?}"
            );
        }
        assert!(cell.load().is_some(), "ungated loads see the recorder");
    }

    #[test]
    fn no_group_passes_while_an_install_fills_the_slot() {
        // The state an install holds between winning the exchange and
        // publishing: no group bit yet, so a record call never reads the
        // slot it is writing.
        let cell = RecorderCell::new();
        cell.state
            .store(super::INITIALIZING, std::sync::atomic::Ordering::Relaxed);
        assert!(Group::ALL.iter().all(|g| cell.load_for(*g).is_none()));
        assert!(cell.load().is_none());
    }

    #[test]
    fn every_group_on_by_default() {
        let cell = RecorderCell::new();
        cell.set(NoopRecorder::new(Role::orchestrator())).unwrap();
        assert!(Group::ALL.iter().all(|g| cell.load_for(*g).is_some()));
    }

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
