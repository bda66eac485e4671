//! The verify tally: exact counts of completed and successful verifications,
//! from which the success rate is computed at collection time.

// Under `--cfg loom` the shard's atomics are loom's, so that `tally_loom.rs`
// checks this very protocol under every interleaving the memory model allows.
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

use crate::per_thread::PerThread;

/// One thread's counts, on a cache line of its own so that recording threads
/// never share a line.
#[repr(align(128))]
struct Shard {
    completed: AtomicU64,
    succeeded: AtomicU64,
}

impl Default for Shard {
    fn default() -> Self {
        Self {
            completed: AtomicU64::new(0),
            succeeded: AtomicU64::new(0),
        }
    }
}

impl Shard {
    /// The writer's side; only the owning thread calls it. Only the owning
    /// thread writes its shard (a shard changes hands only through thread
    /// exit, which the thread-id registry synchronises), so a load and a
    /// store cannot lose an update.
    #[inline(always)]
    fn record(&self, succeeded: bool) {
        let completed = self.completed.load(Ordering::Relaxed);
        self.completed
            .store(completed.wrapping_add(1), Ordering::Relaxed);
        if succeeded {
            let ok = self.succeeded.load(Ordering::Relaxed);
            // Release: a reader that sees this success also sees its completion.
            self.succeeded.store(ok.wrapping_add(1), Ordering::Release);
        }
    }

    /// The writer's side of the shard shared by threads that record after
    /// their own shard is gone (from a thread-local destructor at thread
    /// exit): several may write at once, so each count is a read-modify-write.
    /// A cold path, taken at most a few times per exiting thread.
    fn record_shared(&self, succeeded: bool) {
        self.completed.fetch_add(1, Ordering::Relaxed);
        if succeeded {
            // Release, as above; a later add of another thread continues the
            // release sequence, so a reader seeing any success also sees the
            // completions recorded before it.
            self.succeeded.fetch_add(1, Ordering::Release);
        }
    }

    /// The reader's side: the success count first (acquire), then the
    /// completions, so that `succeeded <= completed` always holds.
    #[inline]
    fn read(&self) -> VerifyCounts {
        let succeeded = self.succeeded.load(Ordering::Acquire);
        let completed = self.completed.load(Ordering::Relaxed);
        VerifyCounts {
            completed,
            succeeded,
        }
    }
}

/// Counts of verifications: exact under any number of threads, and cheap to record.
///
/// Each recording thread owns a shard (a record is two relaxed loads and
/// stores: no read-modify-write, no contention); a reader sums the shards.
/// Shards of exited threads keep their counts and are handed to the next new
/// thread, so memory is bounded by the peak number of live threads. A thread
/// that records after its shard is gone (a timer kept in a `thread_local!`,
/// dropped at thread exit) counts into one shared shard, exactly, and never
/// panics.
///
/// The success rate is computed from a [`VerifyCounts`] snapshot at collection
/// time, so an exporter always sees the latest fraction, never an older one
/// written last, and the fraction is always within `[0, 1]`.
///
/// ```
/// use gym_metrics_kit::VerifyTally;
/// let tally = VerifyTally::new();
/// assert_eq!(tally.snapshot().success_rate(), None); // absent, never NaN
/// tally.record(true);
/// tally.record(false);
/// let counts = tally.snapshot();
/// assert_eq!((counts.completed, counts.succeeded), (2, 1));
/// assert_eq!(counts.success_rate(), Some(0.5));
/// ```
#[derive(Default)]
pub struct VerifyTally {
    shards: PerThread<Shard>,
    /// The counts of threads past the end of their thread-local storage.
    exited: Shard,
}

impl VerifyTally {
    /// An empty tally.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::VerifyTally::new().snapshot().completed, 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one verification.
    ///
    /// ```
    /// let t = gym_metrics_kit::VerifyTally::new();
    /// t.record(true);
    /// assert_eq!(t.snapshot().succeeded, 1);
    /// ```
    #[inline]
    pub fn record(&self, succeeded: bool) {
        match self.shards.get() {
            Some(shard) => shard.record(succeeded),
            None => self.record_without_shard(succeeded),
        }
    }

    /// The thread's first record (its shard is created), or one made after
    /// its thread-local storage was torn down (the shared shard).
    #[cold]
    #[inline(never)]
    fn record_without_shard(&self, succeeded: bool) {
        match self.shards.get_or(Shard::default) {
            Some(shard) => shard.record(succeeded),
            None => self.exited.record_shared(succeeded),
        }
    }

    /// Sums every shard. `succeeded <= completed` always holds: each shard's
    /// success count is read (acquire) before its completion count.
    ///
    /// ```
    /// let t = gym_metrics_kit::VerifyTally::new();
    /// t.record(false);
    /// assert_eq!(t.snapshot().success_rate(), Some(0.0));
    /// ```
    pub fn snapshot(&self) -> VerifyCounts {
        let mut counts = VerifyCounts::default();
        for shard in self.shards.iter().chain([&self.exited]) {
            let read = shard.read();
            counts.succeeded = counts.succeeded.wrapping_add(read.succeeded);
            counts.completed = counts.completed.wrapping_add(read.completed);
        }
        counts
    }
}

impl std::fmt::Debug for VerifyTally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyTally")
            .field("counts", &self.snapshot())
            .finish()
    }
}

/// A consistent reading of a [`VerifyTally`].
///
/// ```
/// use gym_metrics_kit::VerifyCounts;
/// let c = VerifyCounts { completed: 4, succeeded: 3 };
/// assert_eq!(c.success_rate(), Some(0.75));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyCounts {
    /// Verifications completed, successful or not.
    pub completed: u64,
    /// Verifications that succeeded.
    pub succeeded: u64,
}

impl VerifyCounts {
    /// The cumulative success fraction, or `None` before the first verification
    /// (the gauge is then absent, never NaN). Always within `[0, 1]`.
    ///
    /// ```
    /// use gym_metrics_kit::VerifyCounts;
    /// assert_eq!(VerifyCounts::default().success_rate(), None);
    /// ```
    pub fn success_rate(&self) -> Option<f64> {
        if self.completed == 0 {
            return None;
        }
        let rate = self.succeeded as f64 / self.completed as f64;
        Some(rate.clamp(0.0, 1.0))
    }
}

#[cfg(all(test, loom))]
#[path = "tally_loom.rs"]
mod tally_loom;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn exact_across_threads_and_thread_exit() {
        let tally = Arc::new(VerifyTally::new());
        for _round in 0..3 {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let tally = Arc::clone(&tally);
                    std::thread::spawn(move || {
                        for i in 0..10_000u64 {
                            tally.record((i + t) % 4 != 0);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        }
        let c = tally.snapshot();
        assert_eq!(c.completed, 3 * 4 * 10_000);
        assert_eq!(c.succeeded, 3 * 4 * 7_500);
    }

    /// Records `records` verifications (every other one a success) as it drops.
    struct RecordOnDrop {
        tally: Arc<VerifyTally>,
        records: u64,
    }

    impl Drop for RecordOnDrop {
        fn drop(&mut self) {
            for i in 0..self.records {
                self.tally.record(i % 2 == 0);
            }
        }
    }

    std::thread_local! {
        static HELD: std::cell::RefCell<Option<RecordOnDrop>> = const { std::cell::RefCell::new(None) };
    }

    #[test]
    fn threads_recording_from_thread_local_destructors_are_counted_exactly() {
        const THREADS: u64 = 8;
        const AT_EXIT: u64 = 1_000;
        let tally = Arc::new(VerifyTally::new());
        let all_recorded = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let tally = Arc::clone(&tally);
                let all_recorded = Arc::clone(&all_recorded);
                std::thread::spawn(move || {
                    // The holder's destructor is registered before the thread
                    // takes its id, so it runs after the id is given back.
                    HELD.with(|_| {});
                    tally.record(true);
                    HELD.with(|h| {
                        *h.borrow_mut() = Some(RecordOnDrop {
                            tally,
                            records: AT_EXIT,
                        })
                    });
                    // Exit together: the destructors share the fallback shard.
                    all_recorded.wait();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let c = tally.snapshot();
        assert_eq!(c.completed, THREADS * (1 + AT_EXIT));
        assert_eq!(c.succeeded, THREADS * (1 + AT_EXIT / 2));
        let shared = tally.exited.read();
        assert_eq!(
            (shared.completed, shared.succeeded),
            (THREADS * AT_EXIT, THREADS * AT_EXIT / 2)
        );
    }

    #[test]
    fn rate_never_leaves_unit_interval_while_recording() {
        let tally = Arc::new(VerifyTally::new());
        let writer = {
            let tally = Arc::clone(&tally);
            std::thread::spawn(move || {
                for _ in 0..200_000 {
                    tally.record(true);
                }
            })
        };
        while !writer.is_finished() {
            let c = tally.snapshot();
            assert!(c.succeeded <= c.completed, "{c:?}");
        }
        writer.join().unwrap();
        assert_eq!(tally.snapshot().success_rate(), Some(1.0));
    }
}
