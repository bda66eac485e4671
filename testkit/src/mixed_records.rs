//! The workload of the exact-concurrency tests (RELIABILITY.md, case 3):
//! [`THREADS`] threads each record a fixed mix of rollouts and verifications,
//! and [`totals`] is what every backend must export at the end, exactly.

use gym_metrics_api::backend::Recorder;

/// The writer threads of the workload.
pub const THREADS: u64 = 16;

/// The records per thread: the integer in the environment variable `variable`
/// (each backend's test names its own), else 1,000,000.
///
/// ```
/// use gym_testkit::mixed_records::records_per_thread;
/// assert_eq!(records_per_thread("GYM_TESTKIT_DOCTEST_UNSET_VARIABLE"), 1_000_000);
/// ```
pub fn records_per_thread(variable: &str) -> u64 {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// The value thread `t` records at step `i`: whole milliseconds, so that
/// every partial sum is exact in `f64`.
///
/// ```
/// use gym_testkit::mixed_records::duration;
/// assert_eq!(duration(1, 3), 10.0);
/// assert_eq!(duration(0, 4_000), 0.0);
/// ```
pub fn duration(t: u64, i: u64) -> f64 {
    ((t * 7 + i) % 4_000) as f64
}

/// Thread `t`'s share of the workload: 1 in 4 a rollout, else a
/// verification, 2 in 3 of those successful.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use gym_metrics_api::backend::Recorder;
/// use gym_metrics_api::Role;
/// use gym_testkit::mixed_records::{record_mixed, totals};
///
/// struct Tally(Role, [AtomicU64; 2]);
/// impl Recorder for Tally {
///     fn role(&self) -> &Role { &self.0 }
///     fn record_rollout_duration_ms(&self, _ms: f64) {}
///     fn record_verify_ms(&self, _ms: f64, ok: bool) {
///         self.1[0].fetch_add(1, Ordering::Relaxed);
///         self.1[1].fetch_add(u64::from(ok), Ordering::Relaxed);
///     }
///     fn record_active_servers(&self, _count: u64) {}
/// }
/// let tally = Tally(Role::server("conc-0", "resources"), Default::default());
/// record_mixed(&tally, 0, 12);
/// let counts = tally.1.each_ref().map(|c| c.load(Ordering::Relaxed));
/// assert_eq!(counts, [9, 6]);
/// // The totals are every thread's share.
/// assert_eq!(totals(12).verifies, 9 * gym_testkit::mixed_records::THREADS);
/// ```
pub fn record_mixed(recorder: &dyn Recorder, t: u64, per_thread: u64) {
    for i in 0..per_thread {
        if i % 4 == 0 {
            recorder.record_rollout_duration_ms(duration(t, i));
        } else {
            recorder.record_verify_ms(duration(t, i), i % 3 != 0);
        }
    }
}

/// What [`THREADS`] threads of [`record_mixed`] record in all.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Totals {
    /// Rollouts recorded.
    pub rollouts: u64,
    /// The sum of their durations, in ms.
    pub rollout_sum: f64,
    /// Verifications recorded.
    pub verifies: u64,
    /// The sum of their durations, in ms.
    pub verify_sum: f64,
    /// Successful verifications.
    pub succeeded: u64,
}

/// The exact totals of the workload, computed the same way it records.
///
/// ```
/// let t = gym_testkit::mixed_records::totals(4);
/// assert_eq!((t.rollouts, t.verifies, t.succeeded), (16, 48, 32));
/// ```
pub fn totals(per_thread: u64) -> Totals {
    let mut want = Totals::default();
    for t in 0..THREADS {
        for i in 0..per_thread {
            if i % 4 == 0 {
                want.rollouts += 1;
                want.rollout_sum += duration(t, i);
            } else {
                want.verifies += 1;
                want.verify_sum += duration(t, i);
                want.succeeded += u64::from(i % 3 != 0);
            }
        }
    }
    want
}
