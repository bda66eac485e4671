//! Which bucket a value falls in: a binary search over the bounds (in whole
//! nanoseconds) without a data-dependent branch.
//!
//! Each step adds `step` or 0 through a mask: a branch there would be
//! mispredicted whenever the values vary. Up to 31 bounds the search runs
//! over an inline array padded with `u64::MAX` and is fully unrolled (the 15
//! default bounds: four compare-and-move steps); the branch choosing the
//! variant takes the same path on every call, so it is always predicted.

/// The bounds of one histogram, laid out for [`BucketSearch::index`].
#[derive(Debug)]
pub(crate) enum BucketSearch {
    /// Up to 15 bounds, padded to 16.
    Sixteen([u64; 16]),
    /// Up to 31 bounds, padded to 32.
    ThirtyTwo([u64; 32]),
    /// More bounds, padded to a power of two.
    Any(Box<[u64]>),
}

impl BucketSearch {
    /// The search for these increasing bounds in whole nanoseconds
    /// ([`gym_metrics_api::backend::Boundaries::as_nanos`], all below `u64::MAX`).
    pub(crate) fn new(bounds_nanos: &[u64]) -> Self {
        let len = (bounds_nanos.len() + 1).next_power_of_two();
        let mut padded = vec![u64::MAX; len];
        padded[..bounds_nanos.len()].copy_from_slice(bounds_nanos);
        let mut sixteen = [u64::MAX; 16];
        let mut thirty_two = [u64::MAX; 32];
        if len <= 16 {
            sixteen[..len].copy_from_slice(&padded);
            Self::Sixteen(sixteen)
        } else if len <= 32 {
            thirty_two[..len].copy_from_slice(&padded);
            Self::ThirtyTwo(thirty_two)
        } else {
            Self::Any(padded.into_boxed_slice())
        }
    }

    /// Index of the bucket holding `nanos` (`le` inclusive; the number of
    /// real bounds is `+Inf`): the count of bounds below `nanos`.
    #[inline(always)]
    pub(crate) fn index(&self, nanos: u64) -> usize {
        match self {
            Self::Sixteen(padded) => unrolled(padded, nanos),
            Self::ThirtyTwo(padded) => unrolled(padded, nanos),
            Self::Any(padded) => looped(padded, nanos),
        }
    }
}

/// The search over exactly `N` padded bounds; the loop unrolls.
#[inline(always)]
fn unrolled<const N: usize>(padded: &[u64; N], nanos: u64) -> usize {
    let mut index = 0;
    let mut step = N / 2;
    while step > 0 {
        // The pads are never below a value, so `index + step - 1 < N`.
        let below = padded[index + step - 1] < nanos;
        // A mask, not a branch: which way the search goes is data, and a
        // mispredicted branch costs more than the whole search.
        index += step & usize::from(below).wrapping_neg();
        step /= 2;
    }
    index
}

/// The search over any power-of-two length.
#[inline(never)]
fn looped(padded: &[u64], nanos: u64) -> usize {
    let mask = padded.len().wrapping_sub(1);
    let mut index = 0;
    let mut step = padded.len() / 2;
    while step > 0 {
        // The mask only spares the bounds check (see `unrolled`).
        let below = padded[(index + step - 1) & mask] < nanos;
        index += step & usize::from(below).wrapping_neg();
        step /= 2;
    }
    index
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use gym_metrics_api::backend::Boundaries;

    use super::*;
    use crate::nanos::{duration_nanos, millis_nanos};

    #[test]
    fn agrees_with_the_api_for_every_length_and_variant() {
        for len in 1..=70 {
            let bounds = Boundaries::new((1..=len).map(|i| f64::from(i) * 10.0).collect()).unwrap();
            let search = BucketSearch::new(&bounds.as_nanos());
            let expected_variant = match len {
                ..=15 => "Sixteen",
                16..=31 => "ThirtyTwo",
                _ => "Any",
            };
            assert!(
                format!("{search:?}").starts_with(expected_variant),
                "len {len}"
            );
            for tenth in 0..=(len * 100 + 20) {
                let v = f64::from(tenth) / 10.0;
                assert_eq!(
                    search.index(millis_nanos(v).unwrap()),
                    bounds.bucket_index(v),
                    "len {len}, {v}"
                );
            }
            assert_eq!(search.index(u64::MAX), len as usize);
        }
    }

    #[test]
    fn default_bounds_on_and_past_each_bound() {
        let default = Boundaries::default();
        let search = BucketSearch::new(&default.as_nanos());
        for v in [0.0, 100.0, 100.5, 2500.0, 3_600_000.0, 3_600_000.5, 1e300] {
            let nanos = millis_nanos(v).unwrap();
            assert_eq!(search.index(nanos), default.bucket_index(v), "{v}");
        }
        // One nanosecond past a bound is the next bucket; on it, the bound's.
        for (i, &bound) in default.as_slice().iter().enumerate() {
            let on = duration_nanos(Duration::from_secs_f64(bound / 1_000.0));
            assert_eq!(search.index(on), i, "{bound}");
            assert_eq!(search.index(on + 1), i + 1, "{bound}");
        }
    }

    #[test]
    fn a_duration_on_a_decimal_bound_is_in_that_bound() {
        // 4.1 * 1e6 floors to 4,099,999 ns (and 1.001 ms, 8.2 ms alike): a
        // duration of exactly 4.1 ms went to the next bucket.
        let bounds = Boundaries::new(vec![0.000249, 1.001, 4.1, 8.2]).unwrap();
        let search = BucketSearch::new(&bounds.as_nanos());
        for (i, on) in [249, 1_001_000, 4_100_000, 8_200_000]
            .into_iter()
            .enumerate()
        {
            assert_eq!(search.index(on), i, "{on} ns");
            assert_eq!(search.index(on + 1), i + 1, "{on} ns + 1");
        }
        assert_eq!(
            search.index(duration_nanos(Duration::from_micros(4_100))),
            2
        );
    }
}
