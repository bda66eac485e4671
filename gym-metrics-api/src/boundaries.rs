//! Validated histogram bucket boundaries.

use crate::catalogue::Instrument;

/// Why a list of bucket boundaries was rejected.
///
/// ```
/// use gym_metrics_api::backend::{Boundaries, BoundariesError};
/// assert_eq!(Boundaries::new(vec![]).unwrap_err(), BoundariesError::Empty);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BoundariesError {
    /// No boundary at all.
    #[error("histogram boundaries are empty: give at least one upper bound, e.g. [100.0, 1000.0]")]
    Empty,
    /// A NaN or infinite boundary (the `+Inf` bucket is implicit).
    #[error("histogram boundary #{index} is {value}, which is not finite: drop it, the +Inf bucket is implicit")]
    NotFinite {
        /// Position of the offending boundary.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A boundary not greater than the one before it.
    #[error("histogram boundary #{index} ({value}) is not greater than boundary #{} ({previous}): boundaries must be strictly increasing", index - 1)]
    NotIncreasing {
        /// Position of the offending boundary.
        index: usize,
        /// The boundary before it.
        previous: f64,
        /// The offending value.
        value: f64,
    },
    /// A boundary below zero: no duration is, so every value of 0 ms would
    /// land in a bucket that says it is negative.
    #[error("histogram boundary #{index} is {value} ms, below zero: durations are never negative, so 0 ms values would be counted under le=\"{value}\"; use 0 (a bucket of zero durations) or a positive bound")]
    Negative {
        /// Position of the offending boundary.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A positive boundary under one nanosecond.
    #[error("histogram boundary #{index} is {value} ms, below nanosecond resolution: durations are counted in whole nanoseconds, so no duration lies between 0 and it; use 0, or at least 0.000001 ms (1 ns)")]
    BelowNanosecond {
        /// Position of the offending boundary.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A boundary at or past `u64::MAX` nanoseconds, where durations saturate.
    #[error("histogram boundary #{index} is {value} ms, not below the longest duration a histogram can tell apart (u64::MAX ns, 18446744073709.551615 ms or 584 years, where durations saturate): drop it, the +Inf bucket holds everything longer")]
    TooLarge {
        /// Position of the offending boundary.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Two boundaries on the same whole nanosecond: no duration lies between.
    #[error("histogram boundaries #{} ({previous} ms) and #{index} ({value} ms) are the same whole nanosecond ({nanos} ns): durations are counted in whole nanoseconds, so the bucket between them could never count anything; keep bounds at least 0.000001 ms (1 ns) apart", index - 1)]
    SameNanosecond {
        /// Position of the offending boundary.
        index: usize,
        /// The boundary before it.
        previous: f64,
        /// The offending value.
        value: f64,
        /// The whole nanosecond both bounds come to.
        nanos: u64,
    },
}

/// Histogram upper bounds in milliseconds (the `+Inf` bucket is implicit),
/// each one exact at nanosecond resolution: finite, not negative (0 is a
/// bucket of zero durations), 0 or at least 1 ns, below `u64::MAX` ns (584
/// years), and strictly increasing also as whole nanoseconds.
///
/// ```
/// use gym_metrics_api::backend::Boundaries;
/// let b = Boundaries::new(vec![1.0, 10.0, 100.0])?;
/// assert_eq!(b.as_slice(), &[1.0, 10.0, 100.0]);
/// assert!(Boundaries::new(vec![1.0, 1.0]).is_err());
/// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Boundaries(Vec<f64>);

impl Boundaries {
    /// Validates `bounds` (milliseconds): non-empty; each finite, not
    /// negative, 0 or at least one nanosecond, below `u64::MAX` ns;
    /// strictly increasing, also as whole nanoseconds
    /// ([`Boundaries::as_nanos`]). A `-0.0` is kept as `0`.
    ///
    /// # Errors
    /// The first bound that breaks a rule, by index, value and rule.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Boundaries, BoundariesError};
    /// assert!(matches!(Boundaries::new(vec![f64::NAN]), Err(BoundariesError::NotFinite { index: 0, .. })));
    /// assert!(matches!(Boundaries::new(vec![-5.0, 10.0]), Err(BoundariesError::Negative { index: 0, .. })));
    /// assert!(matches!(Boundaries::new(vec![1e-7, 2e-7]), Err(BoundariesError::BelowNanosecond { index: 0, .. })));
    /// assert!(matches!(Boundaries::new(vec![1e14, 1e15]), Err(BoundariesError::TooLarge { index: 0, .. })));
    /// assert!(matches!(Boundaries::new(vec![1.0000001, 1.0000002]), Err(BoundariesError::SameNanosecond { index: 1, nanos: 1_000_000, .. })));
    /// assert_eq!(Boundaries::new(vec![-0.0, 0.5])?.as_slice(), &[0.0, 0.5]);
    /// # Ok::<(), BoundariesError>(())
    /// ```
    pub fn new(mut bounds: Vec<f64>) -> Result<Self, BoundariesError> {
        if bounds.is_empty() {
            return Err(BoundariesError::Empty);
        }
        for (index, value) in bounds.iter_mut().enumerate() {
            // -0.0 is 0: stored as +0, so no exposition says le="-0".
            *value += 0.0;
            let value = *value;
            if !value.is_finite() {
                return Err(BoundariesError::NotFinite { index, value });
            }
            if value < 0.0 {
                return Err(BoundariesError::Negative { index, value });
            }
            match whole_nanos(value) {
                None => return Err(BoundariesError::TooLarge { index, value }),
                Some(0) if value > 0.0 => {
                    return Err(BoundariesError::BelowNanosecond { index, value })
                }
                Some(_) => {}
            }
        }
        for index in 1..bounds.len() {
            let (previous, value) = (bounds[index - 1], bounds[index]);
            if value <= previous {
                return Err(BoundariesError::NotIncreasing {
                    index,
                    previous,
                    value,
                });
            }
            let nanos = whole_nanos(value);
            if nanos == whole_nanos(previous) {
                let nanos = nanos.unwrap_or(u64::MAX);
                return Err(BoundariesError::SameNanosecond {
                    index,
                    previous,
                    value,
                    nanos,
                });
            }
        }
        Ok(Self(bounds))
    }

    /// Each bound as the largest whole nanosecond not above it as written
    /// (its shortest decimal form, the one an exposition's `le` shows), so
    /// that a duration of `n` whole nanoseconds is in a bound's bucket
    /// exactly when `n <= bound`: 4.1 ms is 4,100,000 ns (where
    /// `4.1 * 1e6` floors to 4,099,999). Strictly increasing.
    ///
    /// ```
    /// let b = gym_metrics_api::backend::Boundaries::new(vec![0.0, 0.5, 1.0000015, 4.1, 100.0])?;
    /// assert_eq!(b.as_nanos(), vec![0, 500_000, 1_000_001, 4_100_000, 100_000_000]);
    /// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
    /// ```
    pub fn as_nanos(&self) -> Vec<u64> {
        self.0
            .iter()
            // Validated bounds always convert; the largest valid bound else.
            .map(|&bound| whole_nanos(bound).unwrap_or(u64::MAX - 1))
            .collect()
    }

    /// The catalogue's default duration boundaries, in milliseconds.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Instrument, Boundaries};
    /// assert_eq!(Boundaries::default_duration_ms().as_slice(), Instrument::DEFAULT_DURATION_BOUNDARIES_MS);
    /// assert_eq!(Boundaries::default(), Boundaries::default_duration_ms());
    /// ```
    pub fn default_duration_ms() -> Self {
        Self(Instrument::DEFAULT_DURATION_BOUNDARIES_MS.to_vec())
    }

    /// The upper bounds, without the implicit `+Inf`.
    ///
    /// ```
    /// let b = gym_metrics_api::backend::Boundaries::new(vec![1.0, 10.0])?;
    /// assert_eq!(b.as_slice(), &[1.0, 10.0]);
    /// // The implicit +Inf bucket is the one past the last bound.
    /// assert_eq!(b.bucket_index(f64::MAX), b.as_slice().len());
    /// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
    /// ```
    pub fn as_slice(&self) -> &[f64] {
        &self.0
    }

    /// Index of the bucket that holds `value` (`len()` means the `+Inf` bucket).
    ///
    /// A value equal to a bound falls in that bound's bucket (`le` is inclusive).
    ///
    /// ```
    /// let b = gym_metrics_api::backend::Boundaries::new(vec![1.0, 10.0]).unwrap();
    /// assert_eq!((b.bucket_index(1.0), b.bucket_index(5.0), b.bucket_index(11.0)), (0, 1, 2));
    /// ```
    #[inline]
    pub fn bucket_index(&self, value: f64) -> usize {
        self.0.partition_point(|&bound| bound < value)
    }
}

/// A finite, non-negative bound in milliseconds as the largest whole
/// nanosecond not above it as written: its shortest decimal form truncated
/// after the sixth decimal, in integers (no float product to round).
/// `None` at or past `u64::MAX` ns, where durations saturate.
fn whole_nanos(bound_ms: f64) -> Option<u64> {
    let written = bound_ms.to_string();
    let (millis, fraction) = written.split_once('.').unwrap_or((&written, ""));
    let sub_millis: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .collect();
    let nanos = millis
        .parse::<u64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(sub_millis.parse().ok()?)?;
    (nanos < u64::MAX).then_some(nanos)
}

impl Default for Boundaries {
    fn default() -> Self {
        Self::default_duration_ms()
    }
}

impl From<Boundaries> for Vec<f64> {
    fn from(b: Boundaries) -> Self {
        b.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_each_kind_of_bad_list_and_says_which() {
        assert_eq!(Boundaries::new(vec![]), Err(BoundariesError::Empty));
        let e = Boundaries::new(vec![1.0, f64::INFINITY]).unwrap_err();
        assert!(matches!(e, BoundariesError::NotFinite { index: 1, .. }));
        assert!(e.to_string().contains("#1"), "{e}");
        let e = Boundaries::new(vec![1.0, 5.0, 3.0]).unwrap_err();
        assert_eq!(
            e,
            BoundariesError::NotIncreasing {
                index: 2,
                previous: 5.0,
                value: 3.0
            }
        );
        assert!(e.to_string().contains("strictly increasing"), "{e}");
    }

    #[test]
    fn rejects_bounds_that_nanosecond_durations_cannot_honour_and_says_which() {
        // A 0 ms value would land in le="-5".
        let e = Boundaries::new(vec![-5.0, 10.0]).unwrap_err();
        assert_eq!(
            e,
            BoundariesError::Negative {
                index: 0,
                value: -5.0
            }
        );
        assert!(e.to_string().contains("#0 is -5 ms, below zero"), "{e}");
        // 0.1 and 0.2 ns: nothing between them, and both floor to 0 ns.
        let e = Boundaries::new(vec![1e-7, 2e-7]).unwrap_err();
        assert!(matches!(
            e,
            BoundariesError::BelowNanosecond { index: 0, .. }
        ));
        assert!(e.to_string().contains("0.000001 ms (1 ns)"), "{e}");
        // 1e20 and 1e21 ns: both past u64::MAX, where durations saturate.
        let e = Boundaries::new(vec![1e14, 1e15]).unwrap_err();
        assert!(matches!(e, BoundariesError::TooLarge { index: 0, .. }));
        assert!(e.to_string().contains("584 years"), "{e}");
        let e = Boundaries::new(vec![1.0, 18_446_744_073_709.56]).unwrap_err();
        assert!(matches!(e, BoundariesError::TooLarge { index: 1, .. }));
        assert!(Boundaries::new(vec![18_446_744_073_709.55]).is_ok());
        // 1.2 and 1.8 ns are both 1 ns for a whole-nanosecond duration.
        let e = Boundaries::new(vec![1.0, 1.0000012, 1.0000018]).unwrap_err();
        assert_eq!(
            e,
            BoundariesError::SameNanosecond {
                index: 2,
                previous: 1.0000012,
                value: 1.0000018,
                nanos: 1_000_001
            }
        );
        assert!(e.to_string().contains("#1 (1.0000012 ms) and #2"), "{e}");
    }

    #[test]
    fn keeps_what_nanoseconds_represent_exactly() {
        // 0 is a bucket of zero durations; -0.0 is that same 0.
        let b = Boundaries::new(vec![-0.0, 0.000001, 0.5, 4.1, 1e12]).unwrap();
        assert!(b.as_slice()[0].is_sign_positive());
        // 4.1 ms is 4,100,000 ns, though 4.1 * 1e6 floors to 4,099,999.
        assert_eq!(
            b.as_nanos(),
            vec![0, 1, 500_000, 4_100_000, 1_000_000_000_000_000_000]
        );
        // Every whole microsecond up to 10 s converts exactly.
        for micros in (0..10_000_000u64).step_by(997) {
            let b = Boundaries::new(vec![micros as f64 / 1_000.0]).unwrap();
            assert_eq!(b.as_nanos(), vec![micros * 1_000], "{micros} us");
        }
        // A bound between whole nanoseconds is fine: it floors, exactly.
        let b = Boundaries::new(vec![0.0000015, 0.0000025]).unwrap();
        assert_eq!(b.as_nanos(), vec![1, 2]);
        let computed: Vec<f64> = (1..40).map(|i| 1.5f64.powi(i)).collect();
        assert!(Boundaries::new(computed).is_ok());
    }

    #[test]
    fn bucket_index_is_le_inclusive() {
        let b = Boundaries::default_duration_ms();
        assert_eq!(b.bucket_index(0.0), 0);
        assert_eq!(b.bucket_index(100.0), 0);
        assert_eq!(b.bucket_index(100.5), 1);
        assert_eq!(b.bucket_index(3_600_000.0), 14);
        assert_eq!(b.bucket_index(3_600_001.0), 15);
    }
}
