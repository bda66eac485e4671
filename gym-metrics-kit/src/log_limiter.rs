//! At most one log line per cause per interval, and a count of the lines held
//! back in between: for every line a client can make the process log, so that
//! no client can flood the host's log. Depends on `std` only, so that other
//! crates of the workspace can take it over as it is.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The interval the endpoint's lines use.
pub(crate) const ONCE_A_MINUTE: Duration = Duration::from_secs(60);

/// Lets one line per cause through per interval and counts the others.
#[derive(Debug)]
pub(crate) struct LogLimiter {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldBack {
    count: u64,
    interval: Duration,
}

impl HeldBack {
    /// How many lines of the cause were not logged since its last line.
    #[cfg(test)]
    pub(crate) fn count(self) -> u64 {
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
    pub(crate) const fn new(interval: Duration) -> Self {
        Self {
            interval,
            causes: Mutex::new(Vec::new()),
        }
    }

    /// `Some` when a line for `cause` may be logged now (the first one at
    /// once), with the count held back since the last; `None`, counted, when
    /// the last line of that cause is younger than the interval.
    pub(crate) fn admit(&self, cause: &'static str) -> Option<HeldBack> {
        self.admit_at(cause, Instant::now())
    }

    fn admit_at(&self, cause: &'static str, now: Instant) -> Option<HeldBack> {
        // A panic elsewhere while holding the lock leaves only counts behind.
        let mut causes = self.causes.lock().unwrap_or_else(|p| p.into_inner());
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
}
