//! One value per live thread, for the backends' per-thread shards, found
//! through a thread id of our own that a thread-local destructor can still
//! ask for without a panic.
//!
//! Shaped like the `thread_local` crate's `ThreadLocal` (ids recycled
//! smallest first, so memory is bounded by the peak number of live threads;
//! an exited thread's value is kept and handed to the next new thread), with
//! one difference, the reason this exists: `thread_local` 1.1 panics when a
//! thread whose id guard is already destroyed asks for a value
//! (Amanieu/thread_local-rs#74), and that panic, raised inside a thread-local
//! destructor, aborts the process. That is exactly what a `VerifyTimer` kept
//! in a `thread_local!` does when its thread exits. Here such a thread gets
//! `None` instead, and the caller records into a shared value.
//!
//! The record path does not walk id → bucket → value each time: every
//! thread keeps a few shortcuts, each a `PerThread`'s key (unique for the
//! process's life, never reused) beside a pointer to that thread's value in
//! it. A hit is one compare and one load; a miss (the first call, or two
//! `PerThread`s sharing a shortcut) takes the walk and refills it.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// Bucket `b` holds `2^b` values: ids `2^b - 1 ..= 2^(b+1) - 2`.
const BUCKETS: usize = usize::BITS as usize;

/// Where a thread's value lives: a bucket and an index in it.
#[derive(Clone, Copy)]
struct Slot {
    bucket: usize,
    index: usize,
}

impl Slot {
    /// No id (not yet taken, or given back at thread exit): the bucket is out
    /// of range, so a lookup finds nothing without a branch of its own.
    const NONE: Slot = Slot {
        bucket: BUCKETS,
        index: 0,
    };

    fn of(id: usize) -> Self {
        // `id + 1` cannot overflow: every id is a live thread's.
        let bucket = (usize::BITS - 1 - (id + 1).leading_zeros()) as usize;
        Slot {
            bucket,
            index: id + 1 - (1 << bucket),
        }
    }
}

/// The process-wide id pool: the smallest free id first, so that the ids in
/// use stay dense and the buckets few.
struct Ids {
    next: usize,
    free: BinaryHeap<Reverse<usize>>,
}

static IDS: Mutex<Ids> = Mutex::new(Ids {
    next: 0,
    free: BinaryHeap::new(),
});

/// The pool, whatever a panic elsewhere did while holding it (its state is
/// two plain fields, always consistent).
fn ids() -> MutexGuard<'static, Ids> {
    IDS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Shortcuts per thread: a `PerThread` uses the one its key selects.
const SHORTCUTS: usize = 8;

/// A `PerThread`'s key and this thread's value in it (a `*const T`).
#[derive(Clone, Copy)]
struct Shortcut {
    key: u64,
    /// Never null, so a hit needs no null check.
    value: NonNull<()>,
}

impl Shortcut {
    /// Matches no `PerThread`: keys count up from 16 and never reach this one,
    /// and a `PerThread` without a key yet has key 0.
    const NONE: Shortcut = Shortcut {
        key: u64::MAX,
        value: NonNull::dangling(),
    };
}

/// Keys step by this much: a key's shortcut is `(key / KEY_STEP) % SHORTCUTS`,
/// and with 16-byte shortcuts that index times 16 is the key's bits 4 to 6,
/// so the record path finds its shortcut with one mask, no shift.
const KEY_STEP: u64 = 16;

/// The shortcut a key uses.
#[inline(always)]
fn shortcut_of(key: u64) -> usize {
    (key / KEY_STEP) as usize % SHORTCUTS
}

/// The next `PerThread` key; 0 means "no key yet", so keys start at one step.
static NEXT_KEY: AtomicU64 = AtomicU64::new(KEY_STEP);

thread_local! {
    /// This thread's shortcuts. Filled only with this thread's own values
    /// (never the caller's shared fallback), and emptied by [`IdOwner`]'s
    /// destructor before the thread's id (and so its values) may go to
    /// another thread. No destructor, like `SLOT`.
    static SHORTCUT: [Cell<Shortcut>; SHORTCUTS] =
        const { [const { Cell::new(Shortcut::NONE) }; SHORTCUTS] };
    /// This thread's slot. No destructor, so it stays readable for the whole
    /// thread, teardown included: the record path reads only this.
    static SLOT: Cell<Slot> = const { Cell::new(Slot::NONE) };
    /// Owns this thread's id and gives it back when the thread exits.
    static OWNER: IdOwner = const { IdOwner(Cell::new(None)) };
}

struct IdOwner(Cell<Option<usize>>);

impl Drop for IdOwner {
    fn drop(&mut self) {
        if let Some(id) = self.0.take() {
            // From here on this thread finds no value of its own (`OWNER`
            // is gone, so it cannot take another id either), and the id may
            // go to a new thread. The shortcuts first: from now on they
            // would point at values another thread may own.
            let _ = SHORTCUT.try_with(|all| all.iter().for_each(|s| s.set(Shortcut::NONE)));
            let _ = SLOT.try_with(|slot| slot.set(Slot::NONE));
            ids().free.push(Reverse(id));
        }
    }
}

/// This thread's slot, taking an id if it has none. `None` once the thread's
/// id owner is destroyed (the thread is running its thread-local destructors).
fn slot_or_take_id() -> Option<Slot> {
    let slot = SLOT.try_with(Cell::get).ok()?;
    if slot.bucket < BUCKETS {
        return Some(slot);
    }
    OWNER
        .try_with(|owner| {
            let id = owner.0.get().unwrap_or_else(|| {
                let mut ids = ids();
                match ids.free.pop() {
                    Some(Reverse(id)) => id,
                    None => {
                        let id = ids.next;
                        ids.next += 1;
                        id
                    }
                }
            });
            owner.0.set(Some(id));
            let slot = Slot::of(id);
            let _ = SLOT.try_with(|s| s.set(slot));
            slot
        })
        .ok()
}

/// One `T` per live thread, summed (or otherwise read) by iterating them all.
///
/// [`PerThread::get`] is the record path: a load of the key, a thread-local
/// load and a compare (a shortcut's hit), never a lock. [`PerThread::get_or`] creates the calling thread's
/// value (for a new id, a whole bucket of them) and returns `None` only for a
/// thread past the point where its thread-local storage is torn down (a value
/// kept in a `thread_local!` that records as it drops): the caller then
/// records into a shared value of its own, so nothing is lost and nothing
/// panics. Values are never dropped before the `PerThread` is; a value whose
/// thread exited is handed to the next new thread (only ever one thread at a
/// time writes a value).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use gym_metrics_kit::PerThread;
///
/// let counts: PerThread<AtomicU64> = PerThread::new();
/// assert!(counts.get().is_none()); // nothing for this thread yet
/// std::thread::scope(|s| {
///     for _ in 0..3 {
///         s.spawn(|| {
///             if let Some(mine) = counts.get_or(|| AtomicU64::new(0)) {
///                 mine.fetch_add(1, Ordering::Relaxed);
///             }
///         });
///     }
/// });
/// let total: u64 = counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
/// assert_eq!(total, 3);
/// ```
pub struct PerThread<T> {
    /// This `PerThread`'s shortcut key: 0 until its first value is created.
    key: AtomicU64,
    buckets: [OnceLock<Box<[T]>>; BUCKETS],
}

impl<T> PerThread<T> {
    /// No value for any thread yet.
    ///
    /// ```
    /// let p: gym_metrics_kit::PerThread<u8> = gym_metrics_kit::PerThread::new();
    /// assert_eq!(p.iter().count(), 0);
    /// ```
    pub const fn new() -> Self {
        Self {
            key: AtomicU64::new(0),
            buckets: [const { OnceLock::new() }; BUCKETS],
        }
    }

    /// The calling thread's value, if it has one. Never takes a lock, never
    /// panics (also not from a thread-local destructor).
    ///
    /// ```
    /// let p = gym_metrics_kit::PerThread::new();
    /// assert_eq!(p.get(), None);
    /// p.get_or(|| 7);
    /// assert_eq!(p.get(), Some(&7));
    /// ```
    #[inline(always)]
    pub fn get(&self) -> Option<&T> {
        match self.get_shortcut() {
            Some(value) => Some(value),
            None => self.walk(),
        }
    }

    /// The calling thread's value if its shortcut holds it, else `None` (the
    /// value may still exist: [`PerThread::get`] or [`PerThread::get_or`]
    /// find it and refill the shortcut). For a record path that sends every
    /// miss to one cold path: a hit is a load, a compare and a load.
    ///
    /// ```
    /// let p = gym_metrics_kit::PerThread::new();
    /// assert_eq!(p.get_shortcut(), None);
    /// p.get_or(|| 7);
    /// assert_eq!(p.get_shortcut(), Some(&7));
    /// ```
    #[inline(always)]
    pub fn get_shortcut(&self) -> Option<&T> {
        // Relaxed: only this thread's own shortcut is read, and this thread
        // wrote it after it read the key itself.
        let key = self.key.load(Ordering::Relaxed);
        let hit = SHORTCUT
            .try_with(|all| all[shortcut_of(key)].get())
            .ok()
            .filter(|s| s.key == key)?;
        // SAFETY: a shortcut holding this key was filled by this thread from
        // this very `PerThread` (keys are never reused), with a pointer into
        // one of its buckets, which live as long as it does (`&self` proves
        // it alive) and never move (boxed). The value is this thread's own:
        // the shortcut is emptied before the thread's id goes back to the pool.
        Some(unsafe { hit.value.cast::<T>().as_ref() })
    }

    /// [`PerThread::get`] past a shortcut's miss: id → bucket → value, and
    /// the shortcut refilled.
    #[cold]
    #[inline(never)]
    fn walk(&self) -> Option<&T> {
        let slot = SLOT.try_with(Cell::get).ok()?;
        let value = self.buckets.get(slot.bucket)?.get()?.get(slot.index)?;
        self.remember(value);
        Some(value)
    }

    /// Points this thread's shortcut for this `PerThread` at `value`, which
    /// must be this thread's own (found through its live slot).
    fn remember(&self, value: &T) {
        let key = match self.key.load(Ordering::Relaxed) {
            0 => {
                let fresh = NEXT_KEY.fetch_add(KEY_STEP, Ordering::Relaxed);
                match self
                    .key
                    .compare_exchange(0, fresh, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => fresh,
                    Err(won) => won,
                }
            }
            key => key,
        };
        let _ = SHORTCUT.try_with(|all| {
            all[shortcut_of(key)].set(Shortcut {
                key,
                value: NonNull::from(value).cast(),
            });
        });
    }

    /// The calling thread's value, created with `create` if it has none
    /// (when its id starts a new bucket, `create` runs once for every id of
    /// that bucket). `None` only for a thread whose thread-local storage is
    /// already torn down: record into a shared value instead.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use gym_metrics_kit::PerThread;
    ///
    /// static COUNTS: PerThread<AtomicU64> = PerThread::new();
    /// static SHARED: AtomicU64 = AtomicU64::new(0);
    /// fn count() {
    ///     match COUNTS.get_or(|| AtomicU64::new(0)) {
    ///         Some(mine) => mine.fetch_add(1, Ordering::Relaxed),
    ///         None => SHARED.fetch_add(1, Ordering::Relaxed), // the thread is exiting
    ///     };
    /// }
    /// struct CountOnDrop;
    /// impl Drop for CountOnDrop {
    ///     fn drop(&mut self) {
    ///         count();
    ///     }
    /// }
    /// thread_local! { static HELD: RefCell<Option<CountOnDrop>> = const { RefCell::new(None) }; }
    ///
    /// std::thread::spawn(|| {
    ///     HELD.with(|_| {}); // its destructor registered before the id owner's
    ///     count();
    ///     HELD.with(|h| *h.borrow_mut() = Some(CountOnDrop));
    /// })
    /// .join()
    /// .unwrap();
    /// let own: u64 = COUNTS.iter().map(|c| c.load(Ordering::Relaxed)).sum();
    /// assert_eq!(own + SHARED.load(Ordering::Relaxed), 2);
    /// ```
    pub fn get_or(&self, mut create: impl FnMut() -> T) -> Option<&T> {
        let slot = slot_or_take_id()?;
        let value = self
            .buckets
            .get(slot.bucket)?
            .get_or_init(|| (0..1usize << slot.bucket).map(|_| create()).collect())
            .get(slot.index)?;
        self.remember(value);
        Some(value)
    }

    /// Every value created so far, of live and exited threads alike (with
    /// those of a bucket's ids that no thread has taken yet, as `create` made
    /// them).
    ///
    /// ```
    /// let p = gym_metrics_kit::PerThread::new();
    /// p.get_or(|| 1u32);
    /// assert_eq!(p.iter().sum::<u32>(), 1);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.buckets
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|bucket| bucket.iter())
    }
}

impl<T> Default for PerThread<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for PerThread<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn slots_cover_every_id_once() {
        let mut seen = std::collections::HashSet::new();
        for id in 0..5000 {
            let s = Slot::of(id);
            assert!(s.index < 1 << s.bucket, "id {id}");
            assert!(seen.insert((s.bucket, s.index)), "id {id}");
        }
        assert_eq!((Slot::of(0).bucket, Slot::of(0).index), (0, 0));
        assert_eq!((Slot::of(2).bucket, Slot::of(2).index), (1, 1));
        assert_eq!((Slot::of(3).bucket, Slot::of(3).index), (2, 0));
    }

    #[test]
    fn each_thread_its_own_value_and_exited_threads_values_are_reused() {
        let p: Arc<PerThread<AtomicUsize>> = Arc::new(PerThread::new());
        for _round in 0..4 {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    let p = Arc::clone(&p);
                    std::thread::spawn(move || {
                        let mine = p.get_or(|| AtomicUsize::new(0)).unwrap();
                        // Only this thread writes its value while it lives.
                        let before = mine.load(Ordering::Relaxed);
                        for _ in 0..1000 {
                            mine.store(mine.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                        }
                        assert_eq!(mine.load(Ordering::Relaxed), before + 1000);
                        assert!(std::ptr::eq(p.get().unwrap(), mine));
                    })
                })
                .collect();
            for w in workers {
                w.join().unwrap();
            }
        }
        let total: usize = p.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        assert_eq!(total, 16 * 1000);
        // Ids are recycled: never more values than a few buckets' worth of
        // the live peak (4 workers, this thread and the other tests' threads).
        assert!(p.iter().count() <= 64, "{}", p.iter().count());
    }

    #[test]
    fn shortcuts_shared_by_many_per_threads_still_find_each_its_own_value() {
        // More `PerThread`s than shortcuts: several share one, and each
        // lookup must still return its own value (a displaced shortcut is a
        // miss, never another `PerThread`'s value).
        let all: Vec<PerThread<usize>> = (0..3 * SHORTCUTS).map(|_| PerThread::new()).collect();
        for (i, p) in all.iter().enumerate() {
            assert_eq!(p.get_or(|| i), Some(&i));
        }
        for _round in 0..3 {
            for (i, p) in all.iter().enumerate().rev() {
                assert_eq!(p.get(), Some(&i));
                assert_eq!(p.get_shortcut(), Some(&i), "refilled by get");
            }
        }
        // A `PerThread` dropped and another made (perhaps at the same
        // address): the new one's key is new, so no stale shortcut matches.
        drop(all);
        let fresh: PerThread<usize> = PerThread::new();
        assert_eq!(fresh.get_shortcut(), None);
        assert_eq!(fresh.get(), None);
    }

    /// Set by the destructor below: `None` (no value, no panic) seen.
    static SAW_NONE: AtomicBool = AtomicBool::new(false);

    struct AskOnDrop(Arc<PerThread<u8>>);

    impl Drop for AskOnDrop {
        fn drop(&mut self) {
            let none = self.0.get_shortcut().is_none()
                && self.0.get().is_none()
                && self.0.get_or(|| 1).is_none();
            SAW_NONE.store(none, Ordering::SeqCst);
        }
    }

    thread_local! {
        static HELD: RefCell<Option<AskOnDrop>> = const { RefCell::new(None) };
    }

    #[test]
    fn a_destructor_running_after_the_id_owner_gets_none_not_a_panic() {
        let p = Arc::new(PerThread::new());
        let q = Arc::clone(&p);
        std::thread::spawn(move || {
            HELD.with(|_| {}); // registered first, so destroyed after the owner
            assert_eq!(q.get_or(|| 5), Some(&5));
            // The shortcut is filled: the owner's destructor must empty it.
            assert_eq!(q.get_shortcut(), Some(&5));
            HELD.with(|h| *h.borrow_mut() = Some(AskOnDrop(q)));
        })
        .join()
        .unwrap();
        // Thread-local destructors run in reverse order of registration (glibc).
        assert!(SAW_NONE.load(Ordering::SeqCst));
        assert!(p.iter().count() > 0 && p.iter().all(|&v| v == 5));
    }
}
