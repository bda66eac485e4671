//! Durations in the units backends record, converted in one place for the
//! facade's trait defaults and every backend: whole nanoseconds (how the
//! Prometheus backend keeps time) and milliseconds as `f64` (what the
//! `_ms` methods of [`crate::backend::Recorder`] take).

use std::time::Duration;

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years).
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::backend::duration_nanos;
/// assert_eq!(duration_nanos(Duration::from_micros(1_500)), 1_500_000);
/// assert_eq!(duration_nanos(Duration::MAX), u64::MAX); // saturates, never wraps
/// ```
#[inline(always)]
pub fn duration_nanos(duration: Duration) -> u64 {
    match short_duration_nanos(duration) {
        Some(nanos) => nanos,
        None => duration
            .as_secs()
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(duration.subsec_nanos())),
    }
}

/// [`duration_nanos`] for durations below 18,446,744,073 s (584 years),
/// where no overflow is possible: one compare, a multiply and an add (the
/// saturating forms test for overflow twice). `None` from there on: a record
/// path then takes [`duration_nanos`] on a cold path of its own, so that its
/// hot path keeps no register for the saturating arithmetic.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::backend::short_duration_nanos;
/// assert_eq!(short_duration_nanos(Duration::new(2, 7)), Some(2_000_000_007));
/// assert_eq!(short_duration_nanos(Duration::MAX), None);
/// ```
#[inline(always)]
pub fn short_duration_nanos(duration: Duration) -> Option<u64> {
    /// Below this many seconds nothing can overflow: `(LIMIT - 1) * 1e9 +
    /// 999_999_999 < u64::MAX`.
    const LIMIT: u64 = u64::MAX / 1_000_000_000;
    let secs = duration.as_secs();
    (secs < LIMIT).then(|| secs * 1_000_000_000 + u64::from(duration.subsec_nanos()))
}

/// Milliseconds as `f64`: [`duration_nanos`] times `1e-6`, one conversion and
/// one multiplication where `as_secs_f64() * 1000.0` divides. A whole number
/// of milliseconds (below 2^53 ns, 104 days) comes out exact: `1e-6` is off
/// by under half an ulp of any product's integer part, so the product rounds
/// back to that integer (the unit tests below hold every whole millisecond
/// up to 10 minutes to that).
#[inline(always)]
pub(crate) fn duration_ms(duration: Duration) -> f64 {
    duration_nanos(duration) as f64 * 1e-6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_milliseconds_convert_exactly_and_the_rest_closely() {
        // Every whole millisecond up to 10 minutes, then strides up to 104 days.
        let strided = (0..9_000_000_000u64).step_by(7_919_993);
        for ms in (0..600_000u64).chain(strided) {
            assert_eq!(duration_ms(Duration::from_millis(ms)), ms as f64, "{ms} ms");
        }
        for nanos in [1u64, 999, 1_500_000, 123_456_789_012] {
            let exact = nanos as f64 / 1e6;
            let got = duration_ms(Duration::from_nanos(nanos));
            assert!(
                (got - exact).abs() <= exact * 2.0 * f64::EPSILON,
                "{nanos} ns: {got}"
            );
        }
        assert!(duration_ms(Duration::MAX).is_finite());
    }

    #[test]
    fn short_durations_convert_exactly_and_the_last_seconds_are_left_to_the_saturating_form() {
        let limit = u64::MAX / 1_000_000_000;
        let last_short = Duration::new(limit - 1, 999_999_999);
        assert_eq!(
            short_duration_nanos(last_short),
            Some((limit - 1) * 1_000_000_000 + 999_999_999)
        );
        assert_eq!(short_duration_nanos(Duration::new(limit, 0)), None);
        // Past the short range the saturating form is exact where it can be.
        assert_eq!(
            duration_nanos(Duration::new(limit, 0)),
            limit * 1_000_000_000
        );
    }

    #[test]
    fn nanoseconds_are_whole_and_saturate() {
        assert_eq!(duration_nanos(Duration::ZERO), 0);
        assert_eq!(duration_nanos(Duration::new(2, 7)), 2_000_000_007);
        let last_exact = Duration::from_nanos(u64::MAX);
        assert_eq!(duration_nanos(last_exact), u64::MAX);
        assert_eq!(
            duration_nanos(last_exact + Duration::from_nanos(1)),
            u64::MAX
        );
        assert_eq!(duration_nanos(Duration::MAX), u64::MAX);
    }
}
