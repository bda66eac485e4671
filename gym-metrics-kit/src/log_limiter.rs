//! At most one log line per cause per interval, and a count of the lines held
//! back in between: for every line a client can make the process log, so that
//! no client can flood the host's log, and for failures that go on (one line
//! at once, then a reminder per interval). Depends on `std` only.
//!
//! ```
//! use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
//! static LOG: LogLimiter = LogLimiter::new(ONCE_A_MINUTE);
//! for attempt in 0..3 {
//!     if let Some(held_back) = LOG.admit("accept failed") {
//!         // Only the first of the three gets through.
//!         assert_eq!(attempt, 0);
//!         eprintln!("accept failed ({held_back})");
//!     }
//! }
//! ```

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The interval of the endpoint's lines and of export-failure reminders.
///
/// ```
/// assert_eq!(gym_metrics_kit::log_limiter::ONCE_A_MINUTE.as_secs(), 60);
/// ```
pub const ONCE_A_MINUTE: Duration = Duration::from_secs(60);

/// Lets one line per cause through per interval and counts the others.
///
/// ```
/// use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
/// let log = LogLimiter::new(ONCE_A_MINUTE);
/// assert!(log.admit("a").is_some());
/// assert!(log.admit("a").is_none(), "within the interval");
/// assert!(log.admit("b").is_some(), "another cause is not held back");
/// ```
#[derive(Debug)]
pub struct LogLimiter {
    interval: Duration,
    // A handful of causes: a list is quicker to scan than a map is to hash.
    causes: Mutex<Vec<Cause>>,
}

#[derive(Debug)]
struct Cause {
    name: &'static str,
    last_logged: Instant,
    held_back: u64,
}

/// The lines of one cause held back since its last line: the note a line
/// that gets through carries (`Display`).
///
/// ```
/// use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
/// let held_back = LogLimiter::new(ONCE_A_MINUTE).admit("a").unwrap();
/// assert_eq!(
///     held_back.to_string(),
///     "at most one such line per 60 s; 0 held back since the last"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldBack {
    count: u64,
    interval: Duration,
}

impl HeldBack {
    /// How many lines of the cause were not logged since its last line.
    ///
    /// ```
    /// use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
    /// let log = LogLimiter::new(ONCE_A_MINUTE);
    /// assert_eq!(log.admit("a").map(|h| h.count()), Some(0), "the first line");
    /// ```
    pub fn count(self) -> u64 {
        self.count
    }
}

impl fmt::Display for HeldBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at most one such line per {} s; {} held back since the last",
            self.interval.as_secs(),
            self.count
        )
    }
}

impl LogLimiter {
    /// One line per cause per `interval`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gym_metrics_kit::log_limiter::LogLimiter;
    /// // A zero interval lets every line through.
    /// let log = LogLimiter::new(Duration::ZERO);
    /// assert!(log.admit("a").is_some() && log.admit("a").is_some());
    /// ```
    pub const fn new(interval: Duration) -> Self {
        Self {
            interval,
            causes: Mutex::new(Vec::new()),
        }
    }

    /// `Some` when a line for `cause` may be logged now (the first one at
    /// once), with the count held back since the last; `None`, counted, when
    /// the last line of that cause is younger than the interval.
    ///
    /// ```
    /// use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
    /// let log = LogLimiter::new(ONCE_A_MINUTE);
    /// assert!(log.admit("export failed").is_some());
    /// assert!(log.admit("export failed").is_none());
    /// ```
    pub fn admit(&self, cause: &'static str) -> Option<HeldBack> {
        self.admit_at(cause, Instant::now())
    }

    /// Forgets `cause`: its next line gets through at once, as its first
    /// did, with nothing held back (for a cause that has ended, such as
    /// failures followed by a success).
    ///
    /// ```
    /// use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
    /// let log = LogLimiter::new(ONCE_A_MINUTE);
    /// assert!(log.admit("export failed").is_some());
    /// log.forget("export failed");
    /// assert_eq!(log.admit("export failed").map(|h| h.count()), Some(0));
    /// ```
    pub fn forget(&self, cause: &'static str) {
        self.causes().retain(|c| c.name != cause);
    }

    fn admit_at(&self, cause: &'static str, now: Instant) -> Option<HeldBack> {
        let mut causes = self.causes();
        let interval = self.interval;
        match causes.iter_mut().find(|c| c.name == cause) {
            None => {
                causes.push(Cause {
                    name: cause,
                    last_logged: now,
                    held_back: 0,
                });
                Some(HeldBack { count: 0, interval })
            }
            Some(c) if now.saturating_duration_since(c.last_logged) >= interval => {
                let count = std::mem::take(&mut c.held_back);
                c.last_logged = now;
                Some(HeldBack { count, interval })
            }
            Some(c) => {
                c.held_back += 1;
                None
            }
        }
    }

    fn causes(&self) -> std::sync::MutexGuard<'_, Vec<Cause>> {
        // A panic elsewhere while holding the lock leaves only counts behind.
        self.causes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_cause_per_interval_and_the_rest_counted() {
        let limiter = LogLimiter::new(ONCE_A_MINUTE);
        let t0 = Instant::now();
        assert_eq!(limiter.admit_at("a", t0).map(HeldBack::count), Some(0));
        for s in 1..60 {
            assert!(limiter.admit_at("a", t0 + Duration::from_secs(s)).is_none());
        }
        // Another cause is not held back by the first.
        assert_eq!(limiter.admit_at("b", t0).map(HeldBack::count), Some(0));
        let next = limiter.admit_at("a", t0 + ONCE_A_MINUTE).unwrap();
        assert_eq!(next.count(), 59);
        assert_eq!(
            next.to_string(),
            "at most one such line per 60 s; 59 held back since the last"
        );
        // The count starts again after a line got through.
        assert!(limiter.admit_at("a", t0 + ONCE_A_MINUTE).is_none());
        let later = limiter.admit_at("a", t0 + 2 * ONCE_A_MINUTE).unwrap();
        assert_eq!(later.count(), 1);
    }

    #[test]
    fn a_forgotten_cause_gets_its_next_line_through_at_once_and_others_keep_theirs() {
        let limiter = LogLimiter::new(ONCE_A_MINUTE);
        let t0 = Instant::now();
        assert!(limiter.admit_at("a", t0).is_some());
        assert!(limiter.admit_at("b", t0).is_some());
        assert!(limiter.admit_at("a", t0 + Duration::from_secs(1)).is_none());
        limiter.forget("a");
        let again = limiter.admit_at("a", t0 + Duration::from_secs(2)).unwrap();
        assert_eq!(again.count(), 0, "nothing held back is carried over");
        assert!(limiter.admit_at("b", t0 + Duration::from_secs(2)).is_none());
    }
}
