//! Process metrics read from /proc follow what the process does: ten more
//! open files, four more threads, spent CPU. (Its own test binary: no other
//! test opens or closes descriptors meanwhile.)

use std::sync::{Arc, Barrier};

use gym_metrics_kit::process::ProcessReading;

#[test]
fn open_files_threads_and_cpu_are_seen_rising() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let before = ProcessReading::read().unwrap();
    let files: Vec<std::fs::File> = (0..10)
        .map(|_| std::fs::File::open("/proc/self/stat").unwrap())
        .collect();
    // Four threads that live until the reading is taken.
    let barrier = Arc::new(Barrier::new(5));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait(); // started
                barrier.wait(); // read: may end
            })
        })
        .collect();
    barrier.wait();
    spin_cpu_until(before.cpu_seconds() + 0.05);
    let after = ProcessReading::read().unwrap();
    barrier.wait();
    for t in threads {
        t.join().unwrap();
    }
    drop(files);
    assert!(
        after.open_fds >= before.open_fds + 10,
        "{before:?} {after:?}"
    );
    assert!(after.threads >= before.threads + 4, "{before:?} {after:?}");
    assert!(after.cpu_seconds() >= before.cpu_seconds() + 0.05);
    assert!(after.resident_bytes > 0 && after.virtual_bytes >= after.resident_bytes);
    assert!(after.max_fds.is_none_or(|max| max >= after.open_fds));
    assert_eq!(after.start_time_seconds, before.start_time_seconds);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    // This test binary started within the last day, not in the future.
    assert!(after.start_time_seconds <= now + 1.0, "{after:?}");
    assert!(after.start_time_seconds > now - 86_400.0, "{after:?}");
    // Back down once the files are closed and the threads ended.
    let later = ProcessReading::read().unwrap();
    assert!(later.open_fds + 10 <= after.open_fds, "{after:?} {later:?}");
}

/// Busy work until this process has used `target` CPU seconds (bounded: a
/// CPU clock that never moves fails the caller's assertion instead).
fn spin_cpu_until(target: f64) {
    let mut x = 0u64;
    for _ in 0..100_000 {
        if ProcessReading::read().unwrap().cpu_seconds() >= target {
            return;
        }
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
}
