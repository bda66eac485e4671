//! Validation of the facade's durations: NaN, infinities, negatives and
//! anything longer than [`Instrument::MAX_DURATION`] (`u64::MAX`
//! nanoseconds, 584 years) are dropped, never recorded, never a panic,
//! counted in [`dropped_values`], with a warning logged at most once a minute.

use std::fmt::Display;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::catalogue::Instrument;

const MAX_DURATION_MS: f64 = Instrument::MAX_DURATION_MS;

/// Below this many whole seconds a duration is within
/// [`Instrument::MAX_DURATION`]: one compare on the hot path.
const SHORT_SECS: u64 = u64::MAX / 1_000_000_000;

/// Warnings about dropped values are logged at most this often.
const WARN_INTERVAL: Duration = Duration::from_secs(60);
const NEVER: u64 = u64::MAX;

static LAST_WARNING_MS: AtomicU64 = AtomicU64::new(NEVER);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// `Some(ms)` if `ms` is a usable duration in milliseconds: from 0 to
/// [`MAX_DURATION_MS`], both included (NaN is neither).
#[inline]
pub(crate) fn accept(ms: f64, instrument: &'static str) -> Option<f64> {
    if (0.0..=MAX_DURATION_MS).contains(&ms) {
        return Some(ms);
    }
    reject(&Millis(ms), instrument);
    None
}

/// A refused number of milliseconds as the warning shows it: in scientific
/// notation when large, not as hundreds of digits.
struct Millis(f64);

impl Display for Millis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            ms if ms.abs() >= 1e16 => write!(f, "{ms:e} ms"),
            ms => write!(f, "{ms} ms"),
        }
    }
}

/// `Some(duration)` if `duration` is at most [`Instrument::MAX_DURATION`].
#[inline(always)]
pub(crate) fn accept_duration(duration: Duration, instrument: &'static str) -> Option<Duration> {
    if duration.as_secs() < SHORT_SECS {
        return Some(duration);
    }
    accept_long(duration, instrument)
}

/// [`accept_duration`] from 584 years on: the exact compare, off the hot path.
#[cold]
#[inline(never)]
fn accept_long(duration: Duration, instrument: &'static str) -> Option<Duration> {
    if duration <= Instrument::MAX_DURATION {
        return Some(duration);
    }
    reject(&format_args!("{duration:?}"), instrument);
    None
}

#[cold]
#[inline(never)]
fn reject(value: &dyn Display, instrument: &'static str) {
    let dropped = DROPPED.fetch_add(1, Ordering::Relaxed) + 1;
    let now = since_start_ms();
    let last = LAST_WARNING_MS.load(Ordering::Relaxed);
    let due = last == NEVER || now.saturating_sub(last) >= WARN_INTERVAL.as_millis() as u64;
    if due
        && LAST_WARNING_MS
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        log::warn!(
            target: "gym_metrics",
            "dropped {value} for {instrument}: a duration must be a non-negative number of milliseconds \
             up to {MAX_DURATION_MS:e} (u64::MAX nanoseconds, 584 years) \
             ({dropped} value(s) dropped so far; this warning repeats at most once a minute)"
        );
    }
}

fn since_start_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// How many values the facade has dropped as unusable in this process:
/// NaN, infinities, negatives, and durations longer than
/// [`Instrument::MAX_DURATION`] (`u64::MAX` nanoseconds, 584 years), whether
/// given in milliseconds or as a [`Duration`].
///
/// ```
/// gym_metrics_api::record_rollout_duration_ms(f64::NAN); // nothing installed: not even looked at
/// assert_eq!(gym_metrics_api::dropped_values(), 0);
/// ```
pub fn dropped_values() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_durations_from_zero_to_the_largest() {
        for bad in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            -f64::MIN_POSITIVE,
            1e300,
            1e308,
            f64::MAX,
            MAX_DURATION_MS * (1.0 + f64::EPSILON),
        ] {
            assert_eq!(accept(bad, "test"), None, "{bad}");
        }
        for good in [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            1.5,
            3.6e6,
            MAX_DURATION_MS,
        ] {
            assert_eq!(accept(good, "test"), Some(good), "{good}");
        }
        // The largest is u64::MAX nanoseconds, as `duration_ms` gives it.
        let max = crate::units::duration_ms(Instrument::MAX_DURATION);
        assert_eq!(MAX_DURATION_MS, max);
    }

    #[test]
    fn accepts_durations_up_to_u64_max_nanoseconds() {
        let max = Duration::from_nanos(u64::MAX);
        for good in [Duration::ZERO, Duration::from_secs(SHORT_SECS - 1), max] {
            assert_eq!(accept_duration(good, "test"), Some(good), "{good:?}");
        }
        for bad in [max + Duration::from_nanos(1), Duration::MAX] {
            assert_eq!(accept_duration(bad, "test"), None, "{bad:?}");
        }
    }
}
