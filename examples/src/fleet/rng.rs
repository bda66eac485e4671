//! A small seeded PRNG, written by hand (SplitMix64): repeatable runs without
//! a dependency. Not for anything cryptographic.

use std::time::Duration;

use super::args::MsRange;

/// SplitMix64: one `u64` of state, good statistical quality for a simulation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for the `stream`-th process of a fleet seeded with `seed`.
    pub fn for_stream(seed: u64, stream: u64) -> Self {
        let mut mixer = Self(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        Self(mixer.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform delay within `range` (inclusive; a backwards range is read
    /// from its smaller end). No range overflows, `0..u64::MAX` included.
    pub fn delay(&mut self, range: MsRange) -> Duration {
        let (low, high) = (range.min.min(range.max), range.min.max(range.max));
        let offset = match (high - low).checked_add(1) {
            Some(span) => self.next_u64() % span,
            None => self.next_u64(), // the whole of u64: every draw fits
        };
        Duration::from_millis(low + offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeatable_per_seed_and_stream() {
        let draw = |seed, stream| {
            let mut r = Rng::for_stream(seed, stream);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1, 0), draw(1, 0));
        assert_ne!(draw(1, 0), draw(1, 1));
        assert_ne!(draw(1, 0), draw(2, 0));
    }

    #[test]
    fn unit_and_delay_stay_in_range() {
        let mut r = Rng::for_stream(7, 3);
        let mut below_half = 0;
        for _ in 0..10_000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            below_half += usize::from(u < 0.5);
            let d = r.delay(MsRange { min: 5, max: 9 });
            assert!((5..=9).contains(&d.as_millis()));
        }
        assert!((4_500..5_500).contains(&below_half), "{below_half}");
    }

    #[test]
    fn no_range_overflows() {
        let mut r = Rng::for_stream(7, 4);
        for (min, max) in [(0, u64::MAX), (1, u64::MAX), (u64::MAX, u64::MAX), (9, 5)] {
            let d = r.delay(MsRange { min, max }).as_millis();
            let (low, high) = (min.min(max), min.max(max));
            assert!(
                (u128::from(low)..=u128::from(high)).contains(&d),
                "{min}..{max}: {d}"
            );
        }
    }
}
