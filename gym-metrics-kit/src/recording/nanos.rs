//! Durations as whole nanoseconds: how the histograms keep time, so that the
//! record path adds integers (exact, and one cycle) instead of floats.

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years):
/// the API's conversion, the one the facade's defaults use.
pub use gym_metrics_api::backend::{duration_nanos, short_duration_nanos};

/// Nanoseconds in a millisecond.
pub const NANOS_PER_MILLI: f64 = 1_000_000.0;

/// The most milliseconds a record takes: `u64::MAX` nanoseconds (584 years).
const MAX_MILLIS: f64 = gym_metrics_api::backend::Instrument::MAX_DURATION_MS;

/// Milliseconds to the nearest whole nanosecond; `None` for what the facade
/// refuses (NaN, infinities, negatives, more than [`MAX_MILLIS`]: `1e308`
/// and `f64::MAX` are), so that a direct call drops them as the facade does
/// instead of saturating them into the sum.
#[inline(always)]
pub fn millis_nanos(ms: f64) -> Option<u64> {
    // At MAX_MILLIS the product rounds to 2^64, which `as` takes to u64::MAX.
    (0.0..=MAX_MILLIS)
        .contains(&ms)
        .then_some((ms * NANOS_PER_MILLI + 0.5) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn conversions_round_and_refuse_what_the_facade_refuses() {
        assert_eq!(duration_nanos(Duration::from_millis(120)), 120_000_000);
        assert_eq!(duration_nanos(Duration::MAX), u64::MAX);
        assert_eq!(millis_nanos(0.1), Some(100_000));
        assert_eq!(millis_nanos(0.0000004), Some(0));
        assert_eq!(millis_nanos(0.0000006), Some(1));
        assert_eq!(millis_nanos(MAX_MILLIS), Some(u64::MAX));
        assert_eq!(millis_nanos(-0.0), Some(0));
        let past = MAX_MILLIS * (1.0 + f64::EPSILON);
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e300, 1e308, f64::MAX, past] {
            assert_eq!(millis_nanos(bad), None, "{bad}");
        }
    }
}
