//! Scenario: 8 threads x 100k verifications through the facade, each reaching
//! the recorder exactly once.

use std::time::Duration;

use crate::common::CountingRecorder;
use gym_metrics_api::{install, Role};

#[test]
fn eight_threads_times_100k_are_exact() {
    if gym_testkit::ran_in_child() {
        return;
    }
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 100_000;
    let (counts, forward) = CountingRecorder::leaked(Role::server("s-0", "resources"));
    install(forward).unwrap();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    // Thread t fails every (t+2)-th verification.
                    gym_metrics_api::record_verify(Duration::from_millis(i % 50), i % (t + 2) != 0);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let expected_failures: u64 = (0..THREADS).map(|t| PER_THREAD.div_ceil(t + 2)).sum();
    let c = counts.tally.snapshot();
    assert_eq!(c.completed, THREADS * PER_THREAD);
    assert_eq!(c.succeeded, THREADS * PER_THREAD - expected_failures);
}
