//! RAII timers that read the clock only when recording is enabled, and take
//! the exemplar of the context they start in (where the backend keeps them).

use std::time::Instant;

use crate::backend::Exemplar;
use crate::cell::try_load_for;
use crate::Group;

/// When a timer started, and the exemplar of its context then.
type Started = Option<(Instant, Option<Exemplar>)>;

/// Starts a timer of `group`: nothing unless that group records.
#[inline]
fn start(group: Group) -> Started {
    // The exemplar first, so its capture is not part of the time.
    try_load_for(group).map(|r| {
        let exemplar = r.exemplar();
        (Instant::now(), exemplar)
    })
}

/// Times one rollout and records it into `gym.rollout.duration_ms` when dropped,
/// whether the rollout succeeded or not. Started inside a traced span, its
/// record carries that span as its exemplar where the backend keeps them.
///
/// ```
/// use gym_metrics_api::RolloutTimer;
/// fn rollout() -> Result<(), String> {
///     let _timer = RolloutTimer::start();
///     Err("model timed out".into()) // still recorded
/// }
/// assert!(rollout().is_err()); // the caller still gets the error
/// ```
#[must_use = "the rollout is timed until this value is dropped"]
#[derive(Debug)]
pub struct RolloutTimer {
    start: Started,
}

impl RolloutTimer {
    /// Starts timing; reads the clock (and the exemplar) only if a backend
    /// is installed and the [`Group::Rollout`] span group is on.
    ///
    /// ```
    /// let t = gym_metrics_api::RolloutTimer::start();
    /// drop(t);
    /// ```
    #[inline]
    pub fn start() -> Self {
        Self {
            start: start(Group::Rollout),
        }
    }

    /// Stops timing without recording anything.
    ///
    /// ```
    /// gym_metrics_api::RolloutTimer::start().discard();
    /// ```
    pub fn discard(mut self) {
        self.start = None;
    }
}

impl Drop for RolloutTimer {
    #[inline]
    fn drop(&mut self) {
        if let Some((start, exemplar)) = self.start.take() {
            if let Some(r) = try_load_for(Group::Rollout) {
                r.record_rollout_duration_with(start.elapsed(), exemplar.as_ref());
            }
        }
    }
}

/// Times one verification. Records a success only when marked with
/// [`VerifyTimer::succeeded`]; dropped unmarked (an error, a panic, an early
/// return) it records a failure, as the reference's `finally` does. Its
/// exemplar is taken as [`RolloutTimer`]'s.
///
/// ```
/// use gym_metrics_api::VerifyTimer;
/// fn verify(answer: &str) -> Result<bool, String> {
///     let mut timer = VerifyTimer::start();
///     let passed = answer == "42";
///     if passed {
///         timer.succeeded();
///     }
///     Ok(passed)
/// }
/// assert_eq!(verify("42"), Ok(true));
/// ```
#[must_use = "the verification is timed until this value is dropped"]
#[derive(Debug)]
pub struct VerifyTimer {
    start: Started,
    succeeded: bool,
}

impl VerifyTimer {
    /// Starts timing; reads the clock only if a backend is installed and
    /// the [`Group::Verify`] span group is on.
    ///
    /// ```
    /// let _t = gym_metrics_api::VerifyTimer::start();
    /// ```
    #[inline]
    pub fn start() -> Self {
        Self {
            start: start(Group::Verify),
            succeeded: false,
        }
    }

    /// Marks the verification successful; it is recorded when the timer drops.
    ///
    /// ```
    /// let mut t = gym_metrics_api::VerifyTimer::start();
    /// t.succeeded();
    /// ```
    #[inline]
    pub fn succeeded(&mut self) {
        self.succeeded = true;
    }

    /// Records now with the given outcome.
    ///
    /// ```
    /// gym_metrics_api::VerifyTimer::start().finish(false);
    /// ```
    #[inline]
    pub fn finish(mut self, succeeded: bool) {
        self.succeeded = succeeded;
    }
}

impl Drop for VerifyTimer {
    #[inline]
    fn drop(&mut self) {
        if let Some((start, exemplar)) = self.start.take() {
            if let Some(r) = try_load_for(Group::Verify) {
                r.record_verify_with(start.elapsed(), self.succeeded, exemplar.as_ref());
            }
        }
    }
}
