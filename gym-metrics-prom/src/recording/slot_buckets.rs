//! A value's classic bucket from its native slot, so that a record finds
//! both with one search: the slot gives the bounds below it, and one
//! compare settles the bound within it, if any.
//!
//! The slot of a value only grows with the value, so a bound whose slot is
//! below a value's slot is below the value, and one whose slot is above is
//! above it; only a bound in the same slot needs the compare. That holds
//! while no slot holds two bounds (for the default bounds, at every schema
//! from 1 up); for bounds closer than that, the histogram searches the
//! bounds instead.

/// Per native slot: the bound within it (`u64::MAX` for none) and how many
/// bounds lie in the slots below.
#[derive(Debug)]
pub(crate) struct SlotBuckets {
    per_slot: Box<[(u64, u32)]>,
}

impl SlotBuckets {
    /// The buckets of these increasing bounds (in nanoseconds) by slot,
    /// `slot` giving a value's slot among `slots`; `None` if a slot holds
    /// two bounds.
    pub(crate) fn new(bounds: &[u64], slots: usize, slot: impl Fn(u64) -> usize) -> Option<Self> {
        let mut per_slot = vec![(u64::MAX, 0u32); slots];
        for &bound in bounds {
            let (within, _) = per_slot.get_mut(slot(bound))?;
            if *within != u64::MAX {
                return None;
            }
            *within = bound;
        }
        let mut below = 0;
        for (s, (_, count)) in per_slot.iter_mut().enumerate() {
            while bounds.get(below).is_some_and(|&b| slot(b) < s) {
                below += 1;
            }
            *count = below as u32;
        }
        Some(Self {
            per_slot: per_slot.into_boxed_slice(),
        })
    }

    /// The bucket of `nanos`, whose slot is `slot`.
    #[inline(always)]
    pub(crate) fn index(&self, slot: usize, nanos: u64) -> usize {
        match self.per_slot.get(slot) {
            Some(&(within, below)) => below as usize + usize::from(nanos > within),
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_counting_the_bounds_below_and_refuses_two_in_a_slot() {
        // Slots of 10 ns, (0, 10] being slot 1; 32 and 38 would share slot 4.
        let slot = |nanos: u64| (nanos.div_ceil(10) as usize).min(9);
        let bounds = [15, 40, 75];
        let by_slot = SlotBuckets::new(&bounds, 10, slot).unwrap();
        for nanos in 0..200 {
            let expected = bounds.iter().filter(|&&b| b < nanos).count();
            assert_eq!(by_slot.index(slot(nanos), nanos), expected, "{nanos}");
        }
        assert!(SlotBuckets::new(&[15, 32, 38], 10, slot).is_none());
    }
}
