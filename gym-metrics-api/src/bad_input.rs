//! Validation of the `f64` millisecond entry points: NaN, infinities and
//! negatives are dropped, never recorded, never a panic, with a warning logged
//! at most once a minute.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::catalogue::Instrument;

const MAX_DURATION_MS: f64 = Instrument::MAX_DURATION_MS;

/// Warnings about dropped values are logged at most this often.
const WARN_INTERVAL: Duration = Duration::from_secs(60);
const NEVER: u64 = u64::MAX;

static LAST_WARNING_MS: AtomicU64 = AtomicU64::new(NEVER);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// `Some(ms)` if `ms` is a usable duration in milliseconds, capped at
/// [`MAX_DURATION_MS`].
#[inline]
pub(crate) fn accept(ms: f64, instrument: &'static str) -> Option<f64> {
    if ms.is_finite() && ms >= 0.0 {
        return Some(ms.min(MAX_DURATION_MS));
    }
    reject(ms, instrument);
    None
}

#[cold]
#[inline(never)]
fn reject(ms: f64, instrument: &'static str) {
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
            "dropped {ms} for {instrument}: a duration must be a finite, non-negative number of milliseconds \
             ({dropped} value(s) dropped so far; this warning repeats at most once a minute)"
        );
    }
}

fn since_start_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// How many `f64` values the facade has dropped as unusable in this process.
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
    fn accepts_only_finite_non_negative() {
        for bad in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            -f64::MIN_POSITIVE,
        ] {
            assert_eq!(accept(bad, "test"), None, "{bad}");
        }
        for good in [0.0, -0.0, f64::MIN_POSITIVE, 5e-324, 1.5, 3.6e6] {
            assert_eq!(accept(good, "test"), Some(good), "{good}");
        }
        for huge in [1e300, f64::MAX] {
            assert_eq!(accept(huge, "test"), Some(MAX_DURATION_MS), "{huge}");
        }
        let max = std::time::Duration::MAX.as_secs_f64() * 1_000.0;
        assert_eq!(MAX_DURATION_MS, max);
    }
}
