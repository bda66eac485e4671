//! Which bucket a value falls in: a binary search over the bounds (in whole
//! nanoseconds) without a data-dependent branch.
//!
//! No step branches on the data: a branch there would be mispredicted
//! whenever the values vary. Up to 31 bounds the search runs over an inline
//! array padded with `u64::MAX` in breadth-first (Eytzinger) order and is
//! fully unrolled: each step is `node = 2 * node + (bound < value)`, a
//! compare and an add-with-carry (the 15 default bounds: four steps, and the
//! leaf reached is the bucket). The branch choosing the variant takes the
//! same path on every call, so it is always predicted. Longer bound lists
//! search a sorted array with masked steps.

/// The bounds of one histogram, laid out for [`BucketSearch::index`].
#[derive(Debug)]
pub enum BucketSearch {
    /// Up to 15 bounds with at most two in any octave `[2^k, 2^(k+1))` of
    /// nanoseconds (the 15 default bounds among them): the value's octave
    /// (its highest set bit) gives the first bound that can be at or above
    /// it, and two compares finish the count. `first[k]` is the number of
    /// bounds below `2^k`; `bounds` is padded with `u64::MAX` past the last.
    Octaves { first: [u8; 64], bounds: [u64; 17] },
    /// Up to 15 bounds, padded to 15, as a tree: node `i` (1 to 15) at
    /// index `i`, its children at `2i` and `2i + 1` (index 0 unused).
    Sixteen([u64; 16]),
    /// Up to 31 bounds, padded to 31, as a tree like [`Self::Sixteen`]'s.
    ThirtyTwo([u64; 32]),
    /// More bounds, padded to a power of two.
    Any(Box<[u64]>),
}

impl BucketSearch {
    /// The search for these increasing bounds in whole nanoseconds
    /// ([`gym_metrics_api::backend::Boundaries::as_nanos`], all below `u64::MAX`).
    pub fn new(bounds_nanos: &[u64]) -> Self {
        if let Some(octaves) = Self::octaves(bounds_nanos) {
            return octaves;
        }
        let len = (bounds_nanos.len() + 1).next_power_of_two();
        // At least 31 entries: the trees take 15 or 31 of them.
        let mut padded = vec![u64::MAX; len.max(31)];
        padded[..bounds_nanos.len()].copy_from_slice(bounds_nanos);
        let mut sixteen = [u64::MAX; 16];
        let mut thirty_two = [u64::MAX; 32];
        if len <= 16 {
            breadth_first(&padded[..15], &mut sixteen, 1, &mut 0);
            Self::Sixteen(sixteen)
        } else if len <= 32 {
            breadth_first(&padded[..31], &mut thirty_two, 1, &mut 0);
            Self::ThirtyTwo(thirty_two)
        } else {
            padded.truncate(len);
            Self::Any(padded.into_boxed_slice())
        }
    }

    /// The [`BucketSearch::Octaves`] search, if these bounds allow it.
    fn octaves(bounds_nanos: &[u64]) -> Option<Self> {
        if bounds_nanos.len() > 15 {
            return None;
        }
        let octave = |b: u64| 63 - (b | 1).leading_zeros() as usize;
        let mut per_octave = [0u8; 64];
        for &b in bounds_nanos {
            per_octave[octave(b)] += 1;
        }
        if per_octave.iter().any(|&n| n > 2) {
            return None;
        }
        let mut first = [0u8; 64];
        for (k, f) in first.iter_mut().enumerate() {
            // At most 15 bounds: fits a u8.
            *f = bounds_nanos.iter().filter(|&&b| octave(b) < k).count() as u8;
        }
        let mut bounds = [u64::MAX; 17];
        bounds[..bounds_nanos.len()].copy_from_slice(bounds_nanos);
        Some(Self::Octaves { first, bounds })
    }

    /// Index of the bucket holding `nanos` (`le` inclusive; the number of
    /// real bounds is `+Inf`): the count of bounds below `nanos`.
    #[inline(always)]
    pub fn index(&self, nanos: u64) -> usize {
        match self {
            Self::Octaves { first, bounds } => by_octave(first, bounds, nanos),
            Self::Sixteen(tree) => descend(tree, nanos),
            Self::ThirtyTwo(tree) => descend(tree, nanos),
            Self::Any(padded) => looped(padded, nanos),
        }
    }
}

/// The count of bounds below `nanos` ([`BucketSearch::Octaves`]): every
/// bound of a lower octave is below it, none of a higher one, and of its own
/// octave's (at most two, from `first[k]` on) each compare adds one.
#[inline(always)]
fn by_octave(first: &[u8; 64], bounds: &[u64; 17], nanos: u64) -> usize {
    let k = 63 - (nanos | 1).leading_zeros() as usize;
    // `first` holds at most 15, so both indexes are in range (and the result
    // is at most 15); the masks only spare the bounds checks.
    let i = usize::from(first[k & 63]) & 15;
    i + usize::from(bounds[i] < nanos) + usize::from(bounds[i + 1] < nanos)
}

/// Lays `sorted` (`tree.len() - 1` bounds) out in `tree` breadth first, by
/// an in-order walk from `node`: the `k`-th node the walk visits holds the
/// `k`-th smallest bound, so a descent that goes right past every bound
/// below the value ends at leaf `len + (number of bounds below it)`.
fn breadth_first(sorted: &[u64], tree: &mut [u64], node: usize, next: &mut usize) {
    if node < tree.len() {
        breadth_first(sorted, tree, 2 * node, next);
        tree[node] = sorted[*next];
        *next += 1;
        breadth_first(sorted, tree, 2 * node + 1, next);
    }
}

/// The descent through a tree of `N - 1` bounds ([`breadth_first`]); the
/// loop unrolls. Returns the count of bounds below `nanos`.
#[inline(always)]
fn descend<const N: usize>(tree: &[u64; N], nanos: u64) -> usize {
    // A fixed trip count, so the loop unrolls (a `while node < N` did not).
    let levels = N.trailing_zeros();
    let mut node = 1;
    for _ in 0..levels {
        // Not a branch: which way the search goes is data, and a
        // mispredicted branch costs more than the whole search. The mask
        // only spares the bounds check (`node < N` holds at every level).
        node = 2 * node + usize::from(tree[node & (N - 1)] < nanos);
    }
    node - N
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

    use super::super::nanos::{duration_nanos, millis_nanos};
    use super::*;

    #[test]
    fn agrees_with_the_api_for_every_length_and_variant() {
        for len in 1..=70 {
            let bounds = Boundaries::new((1..=len).map(|i| f64::from(i) * 10.0).collect()).unwrap();
            let search = BucketSearch::new(&bounds.as_nanos());
            let octave = |b: &u64| 63 - (b | 1).leading_zeros();
            let crowded =
                (0..64).any(|k| bounds.as_nanos().iter().filter(|b| octave(b) == k).count() > 2);
            let expected_variant = match len {
                ..=15 if !crowded => "Octaves",
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
        // The fast search: no octave holds more than two default bounds.
        assert!(format!("{search:?}").starts_with("Octaves"), "{search:?}");
        let max = gym_metrics_api::backend::Instrument::MAX_DURATION_MS;
        for v in [0.0, 100.0, 100.5, 2500.0, 3_600_000.0, 3_600_000.5, max] {
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
