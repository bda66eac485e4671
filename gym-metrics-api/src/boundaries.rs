//! Validated histogram bucket boundaries.

use crate::catalogue::DEFAULT_DURATION_BOUNDARIES_MS;

/// Why a list of bucket boundaries was rejected.
///
/// ```
/// use gym_metrics_api::backend::{Boundaries, BoundariesError};
/// assert_eq!(Boundaries::new(vec![]).unwrap_err(), BoundariesError::Empty);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
}

/// Finite, strictly increasing histogram upper bounds (the `+Inf` bucket is implicit).
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
    /// Validates `bounds`: non-empty, all finite, strictly increasing.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Boundaries, BoundariesError};
    /// assert!(matches!(Boundaries::new(vec![f64::NAN]), Err(BoundariesError::NotFinite { index: 0, .. })));
    /// ```
    pub fn new(bounds: Vec<f64>) -> Result<Self, BoundariesError> {
        if bounds.is_empty() {
            return Err(BoundariesError::Empty);
        }
        for (index, &value) in bounds.iter().enumerate() {
            if !value.is_finite() {
                return Err(BoundariesError::NotFinite { index, value });
            }
            if index > 0 && value <= bounds[index - 1] {
                return Err(BoundariesError::NotIncreasing {
                    index,
                    previous: bounds[index - 1],
                    value,
                });
            }
        }
        Ok(Self(bounds))
    }

    /// The catalogue's default duration boundaries, in milliseconds.
    ///
    /// ```
    /// use gym_metrics_api::backend::{catalogue, Boundaries};
    /// assert_eq!(Boundaries::default_duration_ms().as_slice(), catalogue::DEFAULT_DURATION_BOUNDARIES_MS);
    /// assert_eq!(Boundaries::default(), Boundaries::default_duration_ms());
    /// ```
    pub fn default_duration_ms() -> Self {
        Self(DEFAULT_DURATION_BOUNDARIES_MS.to_vec())
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
    fn bucket_index_is_le_inclusive() {
        let b = Boundaries::default_duration_ms();
        assert_eq!(b.bucket_index(0.0), 0);
        assert_eq!(b.bucket_index(100.0), 0);
        assert_eq!(b.bucket_index(100.5), 1);
        assert_eq!(b.bucket_index(3_600_000.0), 14);
        assert_eq!(b.bucket_index(3_600_001.0), 15);
    }
}
