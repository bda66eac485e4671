//! A histogram whose hot path touches only memory owned by the recording thread.
//!
//! Each recording thread owns a shard: a 128-byte line with the sum and a
//! count of successes (for verifications), and an array of its native
//! histogram's counts (`native.rs`) followed by its bucket counts. A record
//! is three relaxed load/store pairs, four with a success (no
//! read-modify-write, no lock); a scrape sums the shards.
//! Durations are kept in whole nanoseconds (integer adds, exact sums; a
//! scrape reports the sum in milliseconds); a shard whose sum would pass
//! `u64::MAX` nanoseconds (584 years) carries it into a float, so nothing
//! is lost. The count is derived from the buckets, so `_count` always equals
//! the `+Inf` bucket. Shards of exited threads keep their counts and are reused by the
//! next new thread (thread ids are recycled by [`PerThread`]), so memory is
//! bounded by the peak number of live threads. A thread that records after
//! its shard is gone (a timer kept in a `thread_local!`, dropped at thread
//! exit) records into one shared shard with read-modify-writes: exact, and
//! never a panic.

// Under `--cfg loom` the shard's atomics are loom's, so that
// `sharded_histogram_loom.rs` checks this very protocol under every
// interleaving the memory model allows. (Only this crate is built with the
// flag: tokio, a dependency of the endpoint, has a loom mode of its own.)
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use crate::PerThread;
use gym_metrics_api::backend::{Boundaries, Exemplar, Instrument};

use super::bucket_search::BucketSearch;
use super::exemplars::{ExemplarSample, Exemplars};
use super::nanos::{duration_nanos, millis_nanos, short_duration_nanos, NANOS_PER_MILLI};
use super::native::{Layout, Reading};
use super::slot_buckets::SlotBuckets;

/// One thread's counters: the sum in whole nanoseconds, the successes (for
/// verifications), and one count per native slot followed by one per
/// bucket (the last bucket is `+Inf`), in one array, so that one pointer
/// reaches both counts of a record.
/// `carried_ms` (`f64` bits) holds what the sum carried past `u64::MAX`
/// nanoseconds: written once per 584 years of recorded time.
#[repr(align(128))]
struct Shard {
    sum_nanos: AtomicU64,
    carried_ms: AtomicU64,
    successes: AtomicU64,
    counts: Box<[AtomicU64]>,
}

// One 128-byte line: no other shard's writes share it.
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Shard>() == 128);

impl Shard {
    fn new(counts: usize) -> Self {
        Self {
            sum_nanos: AtomicU64::new(0),
            carried_ms: AtomicU64::new(0.0f64.to_bits()),
            successes: AtomicU64::new(0),
            counts: (0..counts).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// A point-in-time reading of a [`ShardedHistogram`] (example at
/// [`ShardedHistogram::snapshot`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// Per-bucket (non-cumulative) counts; the last entry is the `+Inf` bucket.
    pub bucket_counts: Vec<u64>,
    /// Sum of every recorded value.
    pub sum: f64,
    /// Values recorded with [`ShardedHistogram::record_outcome`] as successes;
    /// never more than [`HistogramSnapshot::count`].
    pub successes: u64,
    /// The same values in native buckets; their total never more than
    /// [`HistogramSnapshot::count`].
    pub native: Reading,
    /// The native counts per slot of the histogram's [`Layout`], before
    /// [`Layout::reading`] fits them to the bucket limit: what a delta
    /// between two snapshots is taken of.
    pub native_counts: Vec<u64>,
    /// Each bucket's newest exemplar (none kept: empty).
    pub exemplars: Vec<Option<ExemplarSample>>,
}

impl HistogramSnapshot {
    /// Number of recorded values: the sum of the bucket counts.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// h.record(5.0);
    /// h.record(5e6);
    /// assert_eq!(h.snapshot().count(), 2);
    /// ```
    pub fn count(&self) -> u64 {
        self.bucket_counts
            .iter()
            .fold(0u64, |a, &c| a.wrapping_add(c))
    }

    /// The fraction of the values recorded as successes, or `None` before
    /// the first (the success-rate gauge is then absent, never NaN); always
    /// within `[0, 1]`, since a pass reads the successes before the counts.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// assert_eq!(h.snapshot().success_rate(), None);
    /// h.record_outcome(5.0, true);
    /// h.record_outcome(5.0, false);
    /// assert_eq!(h.snapshot().success_rate(), Some(0.5));
    /// ```
    pub fn success_rate(&self) -> Option<f64> {
        let count = self.count();
        (count > 0).then(|| (self.successes as f64 / count as f64).clamp(0.0, 1.0))
    }
}

/// A fixed-boundary histogram sharded per recording thread, with native
/// buckets and an exemplar slot per bucket.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::backend::Boundaries;
/// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
/// let h = ShardedHistogram::new(Boundaries::new(vec![10.0])?, Layout::durations(NativeConfig::default()));
/// h.record_duration(Duration::from_millis(4));
/// std::thread::scope(|s| { s.spawn(|| h.record_outcome(40.0, true)); });
/// let snapshot = h.snapshot();
/// assert_eq!((snapshot.bucket_counts, snapshot.sum, snapshot.successes), (vec![1, 1], 44.0, 1));
/// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
/// ```
pub struct ShardedHistogram {
    boundaries: Boundaries,
    search: BucketSearch,
    /// The bucket's index from the native slot, where it settles it.
    by_slot: SlotBuckets,
    native: Layout,
    exemplars: Exemplars,
    shards: PerThread<Shard>,
    /// The values of threads past the end of their thread-local storage.
    exited: Shard,
}

impl ShardedHistogram {
    /// An empty histogram of durations in milliseconds with these upper
    /// bounds (plus the implicit `+Inf`), and native buckets laid out as
    /// `native`.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// assert_eq!(h.snapshot().count(), 0);
    /// ```
    pub fn new(boundaries: Boundaries, native: Layout) -> Self {
        let bounds = boundaries.as_nanos();
        let slot = |nanos| native_slot(&native, nanos);
        Self {
            by_slot: SlotBuckets::new(&bounds, native.slots(), slot, native.slots()),
            search: BucketSearch::new(&bounds),
            exited: Shard::new(shard_len(&native, &boundaries)),
            exemplars: Exemplars::new(boundaries.as_slice().len() + 1),
            native,
            boundaries,
            shards: PerThread::new(),
        }
    }

    /// The native buckets' layout.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let layout = Layout::durations(NativeConfig::default());
    /// let h = ShardedHistogram::new(Boundaries::default(), layout.clone());
    /// assert_eq!(h.layout().slots(), layout.slots());
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.native
    }

    /// The upper bounds, without `+Inf`.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// assert_eq!(h.boundaries(), &Boundaries::default());
    /// ```
    pub fn boundaries(&self) -> &Boundaries {
        &self.boundaries
    }

    /// Records one value in milliseconds, kept as whole nanoseconds (NaN,
    /// infinities and negatives are dropped: the facade never passes them).
    /// Only the calling thread writes its shard, so a relaxed load followed
    /// by a store cannot lose an update.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// h.record(f64::NAN);
    /// h.record(2.5);
    /// assert_eq!((h.snapshot().count(), h.snapshot().sum), (1, 2.5));
    /// ```
    #[inline]
    pub fn record(&self, value_ms: f64) {
        if let Some(nanos) = millis_nanos(value_ms) {
            self.record_nanos(nanos, false);
        }
    }

    /// Records one measured duration: integer arithmetic only, no float on
    /// the way (the facade's `Duration` calls land here).
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// h.record_duration(std::time::Duration::from_micros(1500));
    /// assert_eq!(h.snapshot().sum, 1.5);
    /// ```
    #[inline(always)]
    pub fn record_duration(&self, duration: Duration) {
        match short_duration_nanos(duration) {
            Some(nanos) => self.record_nanos(nanos, false),
            None => self.record_long(duration, false),
        }
    }

    /// [`ShardedHistogram::record_duration_outcome`] (or, with no outcome,
    /// [`ShardedHistogram::record_duration`]) leaving `exemplar`, if any,
    /// as its bucket's newest.
    ///
    /// ```
    /// use gym_metrics_api::backend::Exemplar;
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// let e = Exemplar::new([1; 16], [2; 8]);
    /// h.record_duration_with(std::time::Duration::from_millis(7), Some(true), e.as_ref());
    /// let exemplars = h.snapshot().exemplars;
    /// assert_eq!(exemplars.iter().flatten().map(|x| x.value).collect::<Vec<_>>(), [7.0]);
    /// ```
    pub fn record_duration_with(
        &self,
        duration: Duration,
        succeeded: Option<bool>,
        exemplar: Option<&Exemplar>,
    ) {
        match succeeded {
            Some(succeeded) => self.record_duration_outcome(duration, succeeded),
            None => self.record_duration(duration),
        }
        // A duration dropped as too long leaves no exemplar either.
        if let Some(exemplar) = exemplar.filter(|_| duration <= Instrument::MAX_DURATION) {
            let nanos = duration_nanos(duration);
            let value = nanos as f64 / NANOS_PER_MILLI;
            self.exemplars
                .offer(self.search.index(nanos), exemplar, value);
        }
    }

    /// A duration of 584 years or more: a tail call, so that the hot path
    /// keeps no register for the saturating arithmetic. Past `u64::MAX`
    /// nanoseconds ([`Instrument::MAX_DURATION`]) it is dropped, as the
    /// facade drops it, never saturated into the sum.
    #[cold]
    #[inline(never)]
    fn record_long(&self, duration: Duration, succeeded: bool) {
        if duration <= Instrument::MAX_DURATION {
            self.record_nanos(duration_nanos(duration), succeeded);
        }
    }

    /// Records one value in milliseconds and its outcome: the success count
    /// lives in the same shard, so a verification costs one shard lookup, not
    /// two, and a scrape reads count and successes from one consistent pass.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// h.record_outcome(3.0, true);
    /// assert_eq!(h.snapshot().successes, 1);
    /// ```
    #[inline]
    pub fn record_outcome(&self, value_ms: f64, succeeded: bool) {
        if let Some(nanos) = millis_nanos(value_ms) {
            self.record_nanos(nanos, succeeded);
        }
    }

    /// [`ShardedHistogram::record_outcome`] for a measured duration.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// h.record_duration_outcome(std::time::Duration::from_millis(3), false);
    /// assert_eq!((h.snapshot().count(), h.snapshot().successes), (1, 0));
    /// ```
    #[inline(always)]
    pub fn record_duration_outcome(&self, duration: Duration, succeeded: bool) {
        match short_duration_nanos(duration) {
            Some(nanos) => self.record_nanos(nanos, succeeded),
            None => self.record_long(duration, succeeded),
        }
    }

    #[inline(always)]
    fn record_nanos(&self, nanos: u64, succeeded: bool) {
        // The shortcut only: a miss (the thread's first record, a shortcut
        // another histogram took, an exiting thread) goes to the cold path,
        // as a tail call.
        match self.shards.get_shortcut() {
            Some(shard) => self.record_in(shard, nanos, succeeded),
            None => self.record_without_shard(nanos, succeeded),
        }
    }

    /// The thread's first record (its shard is created), or one made after
    /// its thread-local storage was torn down (the shared shard).
    #[cold]
    #[inline(never)]
    fn record_without_shard(&self, nanos: u64, succeeded: bool) {
        match self.shard() {
            Some(shard) => self.record_in(shard, nanos, succeeded),
            None => self.record_shared(nanos, succeeded),
        }
    }

    /// The calling thread's shard, created if need be; `None` for a thread
    /// whose thread-local storage is torn down.
    fn shard(&self) -> Option<&Shard> {
        let len = shard_len(&self.native, &self.boundaries);
        self.shards.get_or(|| Shard::new(len))
    }

    /// The hot path makes no call that returns to it (every other path is a
    /// tail call): the native slot, the bucket from it (`slot_buckets.rs`),
    /// the sum and both counts, inline. Any index that misses (a value
    /// outside the native slots, a slot holding two bounds) takes the cold
    /// path, which clamps and searches.
    #[inline(always)]
    fn record_in(&self, shard: &Shard, nanos: u64, succeeded: bool) {
        // Past 2^63 ns (292 years) the value turns negative: past the slots.
        let slot = self.native.unclamped_slot(nanos as i64 as f64);
        let bucket = self.by_slot.index(slot, nanos);
        match (shard.counts.get(bucket), shard.counts.get(slot)) {
            (Some(count), Some(native)) => self.add(shard, count, native, nanos, succeeded),
            _ => self.record_searched(shard, nanos, succeeded),
        }
    }

    /// [`Self::record_in`] where the slot does not settle the bucket: the
    /// slot clamped, the bucket searched.
    #[cold]
    #[inline(never)]
    fn record_searched(&self, shard: &Shard, nanos: u64, succeeded: bool) {
        let (slot, bucket) = self.indices(nanos);
        self.add(
            shard,
            &shard.counts[bucket],
            &shard.counts[slot],
            nanos,
            succeeded,
        );
    }

    /// The indices of `nanos`'s native slot and bucket among a shard's
    /// counts, found the long way.
    fn indices(&self, nanos: u64) -> (usize, usize) {
        let bucket = self.native.slots() + self.search.index(nanos);
        (native_slot(&self.native, nanos), bucket)
    }

    /// Adds one value to `shard`, counted in `count`. Only the calling thread
    /// writes its shard, so a relaxed load followed by a store cannot lose
    /// an update.
    #[inline(always)]
    fn add(
        &self,
        shard: &Shard,
        count: &AtomicU64,
        native: &AtomicU64,
        nanos: u64,
        succeeded: bool,
    ) {
        // Integer nanoseconds: exact, and an add is one cycle on the
        // store-to-load chain a tight loop on one slot forms (a float add is
        // three). Past 584 years of summed time, the sum carries (never wraps).
        let Some(sum) = shard.sum_nanos.load(Ordering::Relaxed).checked_add(nanos) else {
            return Self::carry_then_count(shard, count, native, nanos, succeeded);
        };
        shard.sum_nanos.store(sum, Ordering::Relaxed);
        Self::count_one(shard, count, native, succeeded);
    }

    /// Publishes one value's count, native count and success, after its sum.
    #[inline(always)]
    fn count_one(shard: &Shard, count: &AtomicU64, native: &AtomicU64, succeeded: bool) {
        let new_count = count.load(Ordering::Relaxed).wrapping_add(1);
        // Release: a reader that sees this count also sees the sum before it.
        count.store(new_count, Ordering::Release);
        let new_native = native.load(Ordering::Relaxed).wrapping_add(1);
        // Release: a reader that sees this native count also sees the count.
        native.store(new_native, Ordering::Release);

        if succeeded {
            let new = shard.successes.load(Ordering::Relaxed).wrapping_add(1);
            // Release: a reader that sees this success also sees its bucket count.
            shard.successes.store(new, Ordering::Release);
        }
    }

    /// [`Self::add`] once per 584 years: the carry, then the count.
    #[cold]
    #[inline(never)]
    fn carry_then_count(
        shard: &Shard,
        count: &AtomicU64,
        native: &AtomicU64,
        nanos: u64,
        succeeded: bool,
    ) {
        // Read again rather than passed: the hot path then keeps no copy
        // (only this thread writes the sum, so it is the same value).
        let sum = shard.sum_nanos.load(Ordering::Relaxed);
        Self::carry(shard, sum, nanos);
        Self::count_one(shard, count, native, succeeded);
    }

    /// [`Self::record_in`] for the shard that exiting threads share: several
    /// may write it at once, so every update is a read-modify-write (a cold
    /// path, taken at most a few times per exiting thread). The same order
    /// of publication: sum, then count (release), then success (release).
    fn record_shared(&self, nanos: u64, succeeded: bool) {
        let shard = &self.exited;
        let mut sum = shard.sum_nanos.load(Ordering::Relaxed);
        loop {
            // Past `u64::MAX`, the whole sum and `nanos` move into the carry;
            // only the writer whose exchange took the sum out moves it.
            let (new, moved_nanos) = match sum.checked_add(nanos) {
                Some(new) => (new, None),
                None => (0, Some(sum as f64 + nanos as f64)),
            };
            match shard.sum_nanos.compare_exchange_weak(
                sum,
                new,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    if let Some(moved) = moved_nanos {
                        let _ = shard.carried_ms.fetch_update(
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                            |ms| Some((f64::from_bits(ms) + moved / NANOS_PER_MILLI).to_bits()),
                        );
                    }
                    break;
                }
                Err(seen) => sum = seen,
            }
        }
        let (slot, bucket) = self.indices(nanos);
        shard.counts[bucket].fetch_add(1, Ordering::Release);
        shard.counts[slot].fetch_add(1, Ordering::Release);
        if succeeded {
            shard.successes.fetch_add(1, Ordering::Release);
        }
    }

    /// Moves a shard's sum, plus `nanos`, into its float carry and restarts
    /// the integer sum at zero. A reader racing this may count the moved sum
    /// twice or not at all, once per 584 years of recorded time.
    #[cold]
    #[inline(never)]
    fn carry(shard: &Shard, sum: u64, nanos: u64) {
        let carried = f64::from_bits(shard.carried_ms.load(Ordering::Relaxed))
            + (sum as f64 + nanos as f64) / NANOS_PER_MILLI;
        shard.carried_ms.store(carried.to_bits(), Ordering::Relaxed);
        shard.sum_nanos.store(0, Ordering::Relaxed);
    }

    /// Sums every shard. Each shard's successes are read (acquire) before its
    /// native counts, those before its buckets, and its buckets before its
    /// sum, so `successes <= count`, the native counts total at most the
    /// count, and the sum covers at least every counted value. The sum is
    /// reported in milliseconds.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_kit::recording::{Layout, NativeConfig, ShardedHistogram};
    /// let h = ShardedHistogram::new(Boundaries::default(), Layout::durations(NativeConfig::default()));
    /// h.record(40.0);
    /// let s = h.snapshot();
    /// assert_eq!((s.count(), s.sum, s.native.zero_count), (1, 40.0, 0));
    /// ```
    pub fn snapshot(&self) -> HistogramSnapshot {
        let buckets = self.boundaries.as_slice().len() + 1;
        let mut bucket_counts = vec![0u64; buckets];
        let mut native = vec![0u64; self.native.slots()];
        let mut successes = 0u64;
        let mut sum_ms = 0.0f64;
        for shard in self.shards.iter().chain([&self.exited]) {
            successes = successes.wrapping_add(shard.successes.load(Ordering::Acquire));
            // In order: the native counts, then the buckets.
            let totals = native.iter_mut().chain(bucket_counts.iter_mut());
            for (total, count) in totals.zip(shard.counts.iter()) {
                *total = total.wrapping_add(count.load(Ordering::Acquire));
            }
            let nanos = shard.sum_nanos.load(Ordering::Relaxed);
            let carried = f64::from_bits(shard.carried_ms.load(Ordering::Relaxed));
            sum_ms += carried + nanos as f64 / NANOS_PER_MILLI;
        }
        HistogramSnapshot {
            bucket_counts,
            sum: sum_ms,
            successes,
            native: self.native.reading(&native),
            native_counts: native,
            exemplars: self.exemplars.read(),
        }
    }
}

/// How many counts a shard keeps: one per native slot of `native`, then
/// one per bucket of `boundaries` (`+Inf` last).
fn shard_len(native: &Layout, boundaries: &Boundaries) -> usize {
    native.slots() + boundaries.as_slice().len() + 1
}

/// The native slot of `nanos` in `layout` (a [`Layout::durations`]).
#[inline(always)]
fn native_slot(layout: &Layout, nanos: u64) -> usize {
    // Past 2^63 ns (292 years) the value turns negative: the top slot.
    layout.slot(nanos as i64 as f64)
}

impl std::fmt::Debug for ShardedHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedHistogram")
            .field("boundaries", &self.boundaries)
            .field("snapshot", &self.snapshot())
            .finish()
    }
}

#[cfg(all(test, loom))]
#[path = "sharded_histogram_loom.rs"]
mod sharded_histogram_loom;

/// A histogram of `boundaries` with the default native buckets (tests).
#[cfg(all(test, not(loom)))]
fn histogram(boundaries: Boundaries) -> ShardedHistogram {
    let native = Layout::durations(super::native::NativeConfig::default());
    ShardedHistogram::new(boundaries, native)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::native::NativeConfig;
    use super::*;
    use std::sync::Arc;

    // What the doc examples showed while these types were public.
    #[test]
    fn le_is_inclusive_and_snapshots_count_sum_and_accumulate() {
        let h = histogram(Boundaries::new(vec![100.0, 1000.0]).unwrap());
        assert_eq!(h.snapshot().count(), 0);
        h.record(40.0);
        h.record(100.0);
        h.record(5000.0);
        let s = h.snapshot();
        assert_eq!(s.bucket_counts, [2, 0, 1]);
        assert_eq!((s.count(), s.sum), (3, 5140.0));
        let d = histogram(Boundaries::default());
        assert_eq!(d.boundaries().as_slice().len(), 15);
    }

    #[test]
    fn values_durations_and_outcomes_land_alike_and_nan_is_dropped() {
        let h = histogram(Boundaries::default());
        h.record(120.0);
        h.record(f64::NAN);
        h.record_duration(Duration::from_micros(2_500));
        h.record_outcome(40.0, true);
        h.record_outcome(8000.0, false);
        h.record_duration_outcome(Duration::from_millis(40), true);
        let s = h.snapshot();
        assert_eq!((s.count(), s.successes), (5, 2));
        assert_eq!(s.sum, 120.0 + 2.5 + 40.0 + 8000.0 + 40.0);
    }

    #[test]
    fn exact_across_threads_and_thread_churn() {
        let h = Arc::new(histogram(Boundaries::default()));
        for _round in 0..5 {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    let h = Arc::clone(&h);
                    std::thread::spawn(move || {
                        for i in 0..10_000u32 {
                            h.record(if i % 2 == 0 { 50.0 } else { 4_000_000.0 });
                        }
                    })
                })
                .collect();
            for w in workers {
                w.join().unwrap();
            }
        }
        let s = h.snapshot();
        assert_eq!(s.count(), 5 * 4 * 10_000);
        assert_eq!(s.bucket_counts[0], 5 * 4 * 5_000);
        assert_eq!(s.bucket_counts[15], 5 * 4 * 5_000);
        assert_eq!(s.sum, 5.0 * 4.0 * 5_000.0 * (50.0 + 4_000_000.0));
        // Exited threads' shards were reused: fewer shards recorded into than
        // the 20 threads that recorded (gym-metrics-kit's tests/it/per_thread_reuse.rs
        // counts the reuse exactly, in a process of its own).
        let used = h
            .shards
            .iter()
            .filter(|s| s.sum_nanos.load(Ordering::Relaxed) > 0);
        assert!(used.count() < 20);
    }

    #[test]
    fn successes_exact_across_threads_and_never_ahead_of_the_count() {
        let h = Arc::new(histogram(Boundaries::default()));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let h = Arc::clone(&h);
                std::thread::spawn(move || {
                    for i in 0..100_000u32 {
                        h.record_outcome(f64::from(i % 7_000), i % 4 != 0);
                    }
                })
            })
            .collect();
        while writers.iter().any(|w| !w.is_finished()) {
            let s = h.snapshot();
            assert!(s.successes <= s.count(), "{s:?}");
        }
        for w in writers {
            w.join().unwrap();
        }
        let s = h.snapshot();
        assert_eq!((s.count(), s.successes), (200_000, 150_000));
    }

    #[test]
    fn count_never_runs_ahead_of_the_sum() {
        let h = Arc::new(histogram(Boundaries::default()));
        let writer = {
            let h = Arc::clone(&h);
            std::thread::spawn(move || {
                for _ in 0..200_000 {
                    h.record(1.0);
                }
            })
        };
        while !writer.is_finished() {
            let s = h.snapshot();
            assert!(s.sum >= s.count() as f64, "{s:?}");
        }
        writer.join().unwrap();
        assert_eq!(h.snapshot().count(), 200_000);
    }

    #[test]
    fn durations_and_milliseconds_agree_and_sums_are_exact() {
        let h = histogram(Boundaries::default());
        h.record_duration(Duration::from_nanos(100_000_001)); // just past 100 ms
        h.record(0.1); // 100 µs
        h.record(0.2);
        // The longest taken: u64::MAX ns; the sum carries, never wraps.
        h.record_duration(Duration::from_nanos(u64::MAX));
        h.record(f64::INFINITY); // dropped
        h.record(-1.0); // dropped
                        // Longer than u64::MAX ns, or 1e308 ms: dropped, never saturated.
        h.record_duration(Duration::MAX);
        h.record_duration_outcome(
            Duration::from_nanos(u64::MAX) + Duration::from_nanos(1),
            true,
        );
        h.record(1e308);
        h.record_outcome(f64::MAX, true);
        let s = h.snapshot();
        assert_eq!(s.bucket_counts[0], 2);
        assert_eq!(s.bucket_counts[1], 1);
        assert_eq!((s.bucket_counts[15], s.count(), s.successes), (1, 4, 0));
        assert_eq!(s.sum, (100_300_001.0 + u64::MAX as f64) / 1e6);
        h.record_duration(Duration::from_millis(5)); // the integer sum restarted
        assert_eq!(h.snapshot().sum, s.sum + 5.0);
        let exact = histogram(Boundaries::default());
        exact.record(0.1);
        exact.record(0.2);
        // f64 milliseconds would sum to 0.30000000000000004.
        assert_eq!(exact.snapshot().sum, 0.3);
    }

    /// Records `records` verifications of 200 ms (every other one a success) as it drops.
    struct RecordOnDrop {
        histogram: Arc<ShardedHistogram>,
        records: u64,
    }

    impl Drop for RecordOnDrop {
        fn drop(&mut self) {
            for i in 0..self.records {
                self.histogram
                    .record_duration_outcome(Duration::from_millis(200), i % 2 == 0);
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
        let h = Arc::new(histogram(Boundaries::default()));
        let all_recorded = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let histogram = Arc::clone(&h);
                let all_recorded = Arc::clone(&all_recorded);
                std::thread::spawn(move || {
                    // The holder's destructor is registered before the thread
                    // takes its id, so it runs after the id is given back.
                    HELD.with(|_| {});
                    histogram.record_outcome(1.0, true);
                    HELD.with(|held| {
                        *held.borrow_mut() = Some(RecordOnDrop {
                            histogram,
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
        let s = h.snapshot();
        assert_eq!(s.count(), THREADS * (1 + AT_EXIT));
        assert_eq!(s.successes, THREADS * (1 + AT_EXIT / 2));
        assert_eq!(s.sum, (THREADS * (1 + 200 * AT_EXIT)) as f64);
        assert_eq!(s.bucket_counts[0], THREADS); // 1 ms (le=100), while alive
        assert_eq!(s.bucket_counts[1], THREADS * AT_EXIT); // 200 ms (le=250), at exit
        let shared = h.exited.counts[h.native.slots() + 1].load(Ordering::Relaxed);
        assert_eq!(shared, THREADS * AT_EXIT);
    }

    #[test]
    fn the_shared_shard_carries_its_sum_like_an_own_one() {
        let h = histogram(Boundaries::default());
        h.record_shared(u64::MAX, true);
        h.record_shared(u64::MAX, false); // the integer sum would wrap: it carries
        h.record_shared(5_000_000, false);
        let s = h.snapshot();
        assert_eq!((s.count(), s.successes), (3, 1));
        assert_eq!(s.bucket_counts[15], 2);
        assert_eq!(s.sum, (u64::MAX as f64 + u64::MAX as f64) / 1e6 + 5.0);
    }

    #[test]
    fn the_bucket_from_the_native_slot_is_the_searched_one() {
        for schema in [1, 3, 8] {
            let native = Layout::durations(NativeConfig::default().with_schema(schema).unwrap());
            let h = ShardedHistogram::new(Boundaries::default(), native);
            let by_slot = &h.by_slot;
            let searched = |v| h.indices(v).1;
            let mut nanos = 1u64;
            while nanos < u64::MAX / 32 {
                for v in [nanos - 1, nanos, nanos + 1] {
                    let slot = native_slot(&h.native, v);
                    assert_eq!(
                        by_slot.index(slot, v),
                        searched(v),
                        "{v} ns at schema {schema}"
                    );
                }
                nanos = nanos * 21 / 20 + 1;
            }
            let bounds = h.boundaries.as_nanos();
            let past_range = [0, u64::MAX, 1 << 63, (1 << 63) - 1];
            for v in bounds
                .iter()
                .flat_map(|&b| [b - 1, b, b + 1])
                .chain(past_range)
            {
                let slot = native_slot(&h.native, v);
                assert_eq!(
                    by_slot.index(slot, v),
                    searched(v),
                    "{v} ns at schema {schema}"
                );
            }
        }
        // At schema 0, 20 and 30 minutes share the slot (2^20, 2^21] ms;
        // bounds a millisecond apart share slots at any schema: searched.
        let schema_0 = Layout::durations(NativeConfig::default().with_schema(0).unwrap());
        let h = ShardedHistogram::new(Boundaries::default(), schema_0);
        let twenty_minutes = 20 * 60 * 1_000_000_000;
        let slot = native_slot(&h.native, twenty_minutes);
        assert!(h.by_slot.index(slot, twenty_minutes) >= u32::MAX as usize);
        let bounds: Vec<f64> = (1..=40).map(f64::from).collect();
        let h = histogram(Boundaries::new(bounds).unwrap());
        let slot = native_slot(&h.native, 33_500_000); // (32, 34.9] ms holds 33 and 34
        assert!(h.by_slot.index(slot, 33_500_000) >= u32::MAX as usize);
    }

    #[test]
    fn many_buckets_count_as_few_do() {
        let bounds: Vec<f64> = (1..=40).map(f64::from).collect();
        let h = histogram(Boundaries::new(bounds).unwrap());
        for v in 0..=45 {
            h.record(f64::from(v));
        }
        let s = h.snapshot();
        assert_eq!(s.bucket_counts.len(), 41);
        assert_eq!(s.bucket_counts[0], 2); // 0 and 1
        assert_eq!(s.bucket_counts[39], 1); // 40
        assert_eq!(s.bucket_counts[40], 5); // 41..=45
        assert_eq!(s.count(), 46);
    }
}
