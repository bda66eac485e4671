//! A value's classic bucket from its native slot, so that a record finds
//! both with one search: the slot gives the bounds below it, and one
//! compare settles the bound within it, if any.
//!
//! The slot of a value only grows with the value, so a bound whose slot is
//! below a value's slot is below the value, and one whose slot is above is
//! above it; only a bound in the same slot needs the compare. That holds
//! where a slot holds at most one bound (for the default bounds, every slot
//! at every schema from 1 up); a slot holding two gives no bucket, and the
//! histogram searches the bounds instead.

/// Per native slot: the bound within it (`u64::MAX` for none) and the
/// index of the bucket just above the bounds of the slots below
/// (`u32::MAX` for a slot holding two bounds).
#[derive(Debug)]
pub struct SlotBuckets {
    per_slot: Box<[(u64, u32)]>,
}

impl SlotBuckets {
    /// The buckets of these increasing bounds (in nanoseconds) by slot,
    /// `slot` giving a value's slot among `slots`, the first bucket's index
    /// being `first`.
    pub fn new(bounds: &[u64], slots: usize, slot: impl Fn(u64) -> usize, first: usize) -> Self {
        let mut below = 0;
        let per_slot = (0..slots)
            .map(|s| {
                while bounds.get(below).is_some_and(|&b| slot(b) < s) {
                    below += 1;
                }
                let index = (first + below) as u32;
                let inside = &bounds[below..];
                match inside.iter().take_while(|&&b| slot(b) == s).count() {
                    0 => (u64::MAX, index),
                    1 => (inside[0], index),
                    _ => (u64::MAX, u32::MAX),
                }
            })
            .collect();
        Self { per_slot }
    }

    /// The index of the bucket of `nanos`, whose slot is `slot`; at least
    /// `u32::MAX` where the slot does not settle it (it holds two bounds,
    /// or it is past the last slot).
    #[inline(always)]
    pub fn index(&self, slot: usize, nanos: u64) -> usize {
        match self.per_slot.get(slot) {
            Some(&(within, index)) => index as usize + usize::from(nanos > within),
            None => usize::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_counting_the_bounds_below_and_refuses_two_in_a_slot() {
        // Slots of 10 ns, (0, 10] being slot 1; 32 and 38 share slot 4.
        let slot = |nanos: u64| (nanos.div_ceil(10) as usize).min(9);
        for bounds in [&[15, 40, 75][..], &[15, 32, 38, 75]] {
            let by_slot = SlotBuckets::new(bounds, 10, slot, 7);
            for nanos in 0..200 {
                let index = by_slot.index(slot(nanos), nanos);
                if bounds.contains(&32) && slot(nanos) == 4 {
                    assert!(index >= u32::MAX as usize, "{nanos}");
                } else {
                    let below = bounds.iter().filter(|&&b| b < nanos).count();
                    assert_eq!(index, 7 + below, "{nanos} in {bounds:?}");
                }
            }
            assert_eq!(by_slot.index(10, 5), usize::MAX);
        }
    }
}
