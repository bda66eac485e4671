//! `PerThread` hands an exited thread's value to the next new thread (ids
//! are recycled smallest first), so its memory follows the peak number of
//! live threads, not the number of threads ever started. Ids are
//! process-wide, so this runs in a test binary of its own, where the counts
//! are exact.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use gym_metrics_kit::PerThread;

fn count_once(p: &PerThread<AtomicU64>) {
    p.get_or(|| AtomicU64::new(0))
        .expect("a live thread has a value")
        .fetch_add(1, Ordering::Relaxed);
}

#[test]
fn exited_threads_values_are_reused_so_memory_follows_the_live_peak() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let p = Arc::new(PerThread::new());
    // One at a time (`join` waits for the thread's destructors, which give
    // its id back): every thread gets id 0, and so the same value.
    for _ in 0..20 {
        let p = Arc::clone(&p);
        std::thread::spawn(move || count_once(&p)).join().unwrap();
    }
    let values: Vec<u64> = p.iter().map(|v| v.load(Ordering::Relaxed)).collect();
    assert_eq!(values, [20]);

    // Four at a time, five rounds: ids 0 to 3 in buckets of 1, 2 and 4
    // values, so 7 values, however many rounds.
    for _ in 0..5 {
        let all_hold_an_id = Arc::new(Barrier::new(4));
        let round: Vec<_> = (0..4)
            .map(|_| {
                let (p, all) = (Arc::clone(&p), Arc::clone(&all_hold_an_id));
                std::thread::spawn(move || {
                    count_once(&p);
                    all.wait();
                })
            })
            .collect();
        for t in round {
            t.join().unwrap();
        }
    }
    assert_eq!(p.iter().count(), 7);
    let total: u64 = p.iter().map(|v| v.load(Ordering::Relaxed)).sum();
    assert_eq!(total, 20 + 5 * 4);
}
