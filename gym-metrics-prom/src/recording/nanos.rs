//! Durations as whole nanoseconds: how the histograms keep time, so that the
//! record path adds integers (exact, and one cycle) instead of floats.

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years):
/// the API's conversion, the one the facade's defaults use.
pub(crate) use gym_metrics_api::backend::{duration_nanos, short_duration_nanos};

/// Nanoseconds in a millisecond.
pub(crate) const NANOS_PER_MILLI: f64 = 1_000_000.0;

/// Milliseconds (finite, non-negative) to the nearest whole nanosecond,
/// saturating; `None` for NaN, infinities and negatives.
#[inline(always)]
pub(crate) fn millis_nanos(ms: f64) -> Option<u64> {
    // `as` saturates: 1e300 ms becomes u64::MAX nanoseconds.
    (ms >= 0.0 && ms.is_finite()).then_some((ms * NANOS_PER_MILLI + 0.5) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn conversions_round_saturate_and_refuse() {
        assert_eq!(duration_nanos(Duration::from_millis(120)), 120_000_000);
        assert_eq!(duration_nanos(Duration::MAX), u64::MAX);
        assert_eq!(millis_nanos(0.1), Some(100_000));
        assert_eq!(millis_nanos(0.0000004), Some(0));
        assert_eq!(millis_nanos(0.0000006), Some(1));
        assert_eq!(millis_nanos(1e300), Some(u64::MAX));
        assert_eq!(millis_nanos(-0.0), Some(0));
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            assert_eq!(millis_nanos(bad), None, "{bad}");
        }
    }
}
