//! The verify tally's shard protocol under loom: every interleaving (and
//! every reordering the C++11 memory model allows) of one writer recording
//! and one reader summing. Run with
//! `cargo xtask loom`.
//!
//! The writer runs on the model's main thread and the reader on a spawned
//! one: loom's search then starts from the writer's stores and backtracks
//! the reader's loads to every earlier point.

use super::{Shard, VerifyCounts};
use loom::sync::Arc;

/// The writer's sequence: success, failure, success.
const OUTCOMES: [bool; 3] = [true, false, true];

#[test]
fn a_reader_never_sees_more_successes_than_completions_nor_goes_back() {
    loom::model(|| {
        let shard = Arc::new(Shard::default());
        let reader = {
            let shard = Arc::clone(&shard);
            loom::thread::spawn(move || {
                let first = shard.read();
                let second = shard.read();
                (first, second)
            })
        };
        for ok in OUTCOMES {
            shard.record(ok);
        }
        let (first, second) = reader.join().unwrap();
        for c in [first, second] {
            assert!(c.succeeded <= c.completed, "{c:?}");
            assert!(c.completed <= 3 && c.succeeded <= 2, "{c:?}");
        }
        assert!(
            second.completed >= first.completed,
            "{second:?} after {first:?}"
        );
        assert!(
            second.succeeded >= first.succeeded,
            "{second:?} after {first:?}"
        );
        // The writer's own view: nothing lost.
        assert_eq!(
            shard.read(),
            VerifyCounts {
                completed: 3,
                succeeded: 2
            }
        );
    });
}

#[test]
fn a_success_seen_implies_its_completion_seen() {
    loom::model(|| {
        let shard = Arc::new(Shard::default());
        let reader = {
            let shard = Arc::clone(&shard);
            loom::thread::spawn(move || shard.read())
        };
        shard.record(true);
        let c = reader.join().unwrap();
        // The only states a reader may observe: nothing yet, the completion
        // alone, or both; never the success without its completion.
        assert!(
            matches!((c.completed, c.succeeded), (0, 0) | (1, 0) | (1, 1)),
            "{c:?}"
        );
    });
}

#[test]
fn the_shared_shard_loses_nothing_to_two_writers_and_never_shows_a_success_alone() {
    loom::model(|| {
        let shard = Arc::new(Shard::default());
        let writers: Vec<_> = [vec![true], vec![true, false]]
            .into_iter()
            .map(|outcomes| {
                let shard = Arc::clone(&shard);
                loom::thread::spawn(move || {
                    for ok in outcomes {
                        shard.record_shared(ok);
                    }
                })
            })
            .collect();
        let seen = shard.read();
        assert!(seen.succeeded <= seen.completed, "{seen:?}");
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(
            shard.read(),
            VerifyCounts {
                completed: 3,
                succeeded: 2
            }
        );
    });
}
