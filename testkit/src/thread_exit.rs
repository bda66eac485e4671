//! The workload of the thread-local-destructor tests (issue 15, item 3),
//! the same for every backend: timers kept in a `thread_local!` and dropped
//! when their thread exits, after the thread's shard id is gone (the holder
//! is registered before the thread's first record, so it is destroyed after
//! it: the case that once aborted the process inside `thread_local`'s id
//! lookup). [`Expected`] is what every backend must export afterwards.

use std::cell::RefCell;
use std::sync::{Arc, Barrier};

use gym_metrics_api::{HttpMethod, HttpServerRequestTimer, RolloutTimer, UrlScheme, VerifyTimer};

/// Threads that record once while alive, then leave timers for their exit
/// (one more thread records only at its exit).
pub const RECORDING_THREADS: u64 = 8;

/// What a thread leaves behind when it exits.
#[derive(Default)]
struct Left {
    timers: Vec<Box<dyn std::any::Any>>,
}

thread_local! {
    static LEFT: RefCell<Left> = RefCell::new(Left::default());
}

/// Fills this thread's `LEFT` with a successful and a failed verification,
/// a rollout and an HTTP request, all to be recorded when the thread exits.
fn leave_timers_for_thread_exit() {
    let mut ok = VerifyTimer::start();
    ok.succeeded();
    let failed = VerifyTimer::start();
    let rollout = RolloutTimer::start();
    let request = HttpServerRequestTimer::start(HttpMethod::Post, Some("/verify"), UrlScheme::Http);
    LEFT.with(|left| {
        let timers = &mut left.borrow_mut().timers;
        timers.push(Box::new(ok));
        timers.push(Box::new(failed));
        timers.push(Box::new(rollout));
        timers.push(Box::new(request));
    });
}

/// The counts a backend must export after [`record_at_thread_exit`].
///
/// ```
/// let e = gym_testkit::thread_exit::Expected::new();
/// assert_eq!(e.completed, e.succeeded + e.threads);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    /// Exiting threads (each records at its exit).
    pub threads: u64,
    /// `gym.verify.completed` (and the verify histogram's count).
    pub completed: u64,
    /// `gym.verify.succeeded`.
    pub succeeded: u64,
    /// The rollout histogram's count.
    pub rollouts: u64,
    /// The HTTP request histogram's count (all at exit, route `_OTHER`).
    pub requests: u64,
}

impl Expected {
    /// The counts of [`record_at_thread_exit`]: alive, one success and one
    /// rollout per recording thread; at exit, per thread, a success, a
    /// failure, a rollout and a request.
    pub fn new() -> Self {
        let threads = RECORDING_THREADS + 1;
        Self {
            threads,
            completed: RECORDING_THREADS + 2 * threads,
            succeeded: RECORDING_THREADS + threads,
            rollouts: RECORDING_THREADS + threads,
            requests: threads,
        }
    }
}

impl Default for Expected {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs the workload through whatever is installed and returns once every
/// thread has exited (their destructors racing).
///
/// # Panics
/// When a recording thread panicked: recording must never panic.
///
/// ```
/// // Nothing installed: the timers record nowhere, and nothing panics.
/// gym_testkit::thread_exit::record_at_thread_exit();
/// ```
pub fn record_at_thread_exit() {
    let all_left = Arc::new(Barrier::new(RECORDING_THREADS as usize));
    let mut threads: Vec<_> = (0..RECORDING_THREADS)
        .map(|_| {
            let all_left = Arc::clone(&all_left);
            std::thread::spawn(move || {
                LEFT.with(|_| {}); // registered first: destroyed after the shard id
                let mut first = VerifyTimer::start();
                first.succeeded();
                drop(first);
                drop(RolloutTimer::start());
                leave_timers_for_thread_exit();
                all_left.wait(); // exit together: the destructors race
            })
        })
        .collect();
    // And one thread whose only records are the ones left for its exit.
    threads.push(std::thread::spawn(leave_timers_for_thread_exit));
    for t in threads {
        #[allow(clippy::expect_used)]
        t.join().expect("a recording thread panicked");
    }
}
