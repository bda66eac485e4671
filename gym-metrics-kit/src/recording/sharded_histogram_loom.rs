//! The sharded histogram's shard protocol under loom: every interleaving (and
//! every reordering the C++11 memory model allows) of one thread recording
//! and one thread taking a snapshot, on the real `ShardedHistogram`. Run with
//! `cargo xtask loom`.
//!
//! The writer runs on the model's main thread and the reader on a spawned
//! one: loom's search then starts from the writer's stores and backtracks the
//! reader's loads to every earlier point.

use super::{HistogramSnapshot, ShardedHistogram};
use gym_metrics_api::backend::Boundaries;
use loom::sync::Arc;

/// Two bounds: 40 lands in the first bucket, 5000 in `+Inf`; and two
/// native slots (the zero bucket, then 32 to 64 ms at schema 0, where 5000
/// is clamped too), so that the model stays small.
fn histogram() -> ShardedHistogram {
    let native = super::Layout::scaled(0, 160, 5, 1, 1e6);
    ShardedHistogram::new(
        Boundaries::new(vec![100.0, 1000.0]).expect("valid bounds"),
        native,
    )
}

/// Every interleaving with at most three preemptions (as tokio bounds its
/// models): the native counts' stores made the unbounded search take
/// minutes, and the orderings checked here need one or two.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

#[test]
fn a_snapshot_never_counts_a_value_its_sum_lacks_nor_a_success_its_count_lacks() {
    model(|| {
        let h = Arc::new(histogram());
        // The writer's shard exists before the reader looks (thread_local's own
        // registry is not what is checked here); it starts at zero.
        h.shard().expect("a live thread has a shard");
        let reader = {
            let h = Arc::clone(&h);
            loom::thread::spawn(move || h.snapshot())
        };
        h.record_outcome(40.0, true);
        h.record_outcome(5000.0, false);
        let seen: HistogramSnapshot = reader.join().expect("reader");
        let count = seen.count();
        assert!(seen.successes <= count, "{seen:?}");
        // Native counts are published after the bucket's: never ahead of it.
        let native = seen.native.zero_count + seen.native.positive.counts.iter().sum::<u64>();
        assert!(native <= count, "{seen:?}");
        // Counts are published after the sum (release/acquire): a value counted
        // is a value summed.
        let min_sum = match count {
            0 => 0.0,
            1 => 40.0,
            _ => 5040.0,
        };
        assert!(seen.sum >= min_sum, "{seen:?}");
        assert!(count <= 2 && seen.sum <= 5040.0, "{seen:?}");
        // The writer's own view afterwards: nothing lost.
        let last = h.snapshot();
        assert_eq!(last.bucket_counts, vec![1, 0, 1]);
        assert_eq!((last.sum, last.successes), (5040.0, 1));
    });
}

#[test]
fn the_shared_shard_of_exiting_threads_loses_nothing_to_two_writers() {
    model(|| {
        let h = Arc::new(histogram());
        let writers: Vec<_> = [(40.0, true), (5000.0, false)]
            .into_iter()
            .map(|(ms, ok)| {
                let h = Arc::clone(&h);
                loom::thread::spawn(move || h.record_shared((ms * 1e6) as u64, ok))
            })
            .collect();
        let seen = h.snapshot();
        assert!(seen.successes <= seen.count(), "{seen:?}");
        let min_sum = match seen.bucket_counts.as_slice() {
            [0, 0, 0] => 0.0,
            [1, 0, 0] => 40.0,
            [0, 0, 1] => 5000.0,
            _ => 5040.0,
        };
        assert!(seen.sum >= min_sum, "{seen:?}");
        for w in writers {
            w.join().expect("writer");
        }
        let last = h.snapshot();
        assert_eq!(last.bucket_counts, vec![1, 0, 1]);
        assert_eq!((last.sum, last.successes), (5040.0, 1));
    });
}
