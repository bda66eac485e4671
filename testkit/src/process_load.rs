//! The process-metrics workload both backends' tests share: while a
//! closure observes, this process holds [`FILES`] more open files and
//! [`THREADS`] more threads than before; both are released when it returns.

use std::sync::{Arc, Barrier};

/// Files held open (of `/proc/self/stat`) while the closure runs.
pub const FILES: usize = 10;
/// Threads kept alive while the closure runs.
pub const THREADS: usize = 4;

/// Runs `observe` while [`FILES`] more files are open and [`THREADS`] more
/// threads are alive, then closes the files and joins the threads.
///
/// ```
/// let threads = || std::fs::read_dir("/proc/self/task").unwrap().count();
/// let before = threads();
/// let during = gym_testkit::process_load::while_holding(threads);
/// assert!(during >= before + gym_testkit::process_load::THREADS);
/// ```
///
/// # Panics
/// `/proc/self/stat` cannot be opened, or a thread panicked.
pub fn while_holding<R>(observe: impl FnOnce() -> R) -> R {
    let files: Vec<std::fs::File> = (0..FILES)
        .map(|_| {
            std::fs::File::open("/proc/self/stat")
                .unwrap_or_else(|e| panic!("opening /proc/self/stat: {e}"))
        })
        .collect();
    let barrier = Arc::new(Barrier::new(THREADS + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait(); // started
                barrier.wait(); // observed: may end
            })
        })
        .collect();
    barrier.wait();
    let seen = observe();
    barrier.wait();
    for t in threads {
        if t.join().is_err() {
            panic!("a holding thread panicked");
        }
    }
    drop(files);
    seen
}
