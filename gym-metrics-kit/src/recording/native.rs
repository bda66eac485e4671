//! Native histograms: which exponential bucket a value falls in, as
//! Prometheus defines them, and what a scrape shows of their counts.
//!
//! At schema `s`, bucket `k` holds the values in `(2^((k-1)/2^s), 2^(k/2^s)]`
//! (schema 3: eight buckets per doubling, each about 9 % wide). A duration
//! histogram keeps 40 doublings apart, from about a microsecond (2^-10 ms,
//! 2^-20 s) to about twelve days, a bridged one 80, from 2^-30 to 2^50;
//! smaller values count in the zero bucket, larger ones in the top bucket. Counts are kept at the configured schema (at
//! least 0); a scrape lowers the schema, merging neighbours, until the
//! buckets in use fit the bucket limit. At the lowest schema (-4) still over
//! the limit, it widens the zero bucket, as client_golang does when its
//! schema can go no lower: the lowest buckets in use fold into it (its
//! threshold becomes the upper bound of the last one folded) until the
//! rest fit. So a scrape never shows more than the limit, whatever the
//! values, the schema and the limit (1 or more), and its count is always the
//! zero bucket's plus every bucket's.
//!
//! The bucket is found without a loop or a data-dependent branch: the
//! value's exponent gives the doubling, and the top 9 bits of its mantissa
//! a cell holding at most one bound, so one compare finishes. The classic
//! bucket then follows from the slot (`slot_buckets.rs`).

/// The schema when none is set: eight buckets per doubling (about 9 %).
pub const DEFAULT_SCHEMA: i8 = 3;
/// The lowest schema Prometheus takes (16 doublings per bucket).
pub const MIN_SCHEMA: i8 = -4;
/// The highest schema Prometheus takes (256 buckets per doubling).
pub const MAX_SCHEMA: i8 = 8;
/// The most buckets a scrape shows per series when none is set: the
/// OpenTelemetry SDKs' default for exponential histograms.
pub const DEFAULT_BUCKET_LIMIT: usize = 160;

/// The native histograms' settings: the schema and the bucket limit.
///
/// ```
/// use gym_metrics_kit::recording::NativeConfig;
/// let c = NativeConfig::default().with_schema(5)?.with_bucket_limit(40)?;
/// assert_eq!((c.schema, c.bucket_limit), (5, 40));
/// # Ok::<(), gym_metrics_kit::recording::NativeHistogramError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeConfig {
    /// Bucket `k` holds `(2^((k-1)/2^schema), 2^(k/2^schema)]`; from
    /// [`MIN_SCHEMA`] to [`MAX_SCHEMA`].
    pub schema: i8,
    /// The most buckets a scrape shows per series (at least 1).
    pub bucket_limit: usize,
}

/// A native-histogram setting this backend cannot use.
///
/// ```
/// let e = gym_metrics_kit::recording::NativeConfig::default().with_schema(9).unwrap_err();
/// assert!(e.to_string().contains("from -4 to 8"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NativeHistogramError {
    /// A schema Prometheus does not take.
    #[error("native histogram schema {0} is out of range: give one from -4 to 8 (3, the default, has eight buckets per doubling, each about 9 % wide; each step up halves the width and doubles the memory per thread)")]
    Schema(i8),
    /// A bucket limit of zero.
    #[error(
        "a native histogram bucket limit of 0 would show no bucket: give 1 or more (default 160)"
    )]
    BucketLimit,
}

impl NativeConfig {
    /// These settings with `schema`.
    ///
    /// ```
    /// use gym_metrics_kit::recording::{NativeConfig, MIN_SCHEMA};
    /// assert_eq!(NativeConfig::default().with_schema(MIN_SCHEMA)?.schema, -4);
    /// assert!(NativeConfig::default().with_schema(-5).is_err());
    /// # Ok::<(), gym_metrics_kit::recording::NativeHistogramError>(())
    /// ```
    pub fn with_schema(self, schema: i8) -> Result<Self, NativeHistogramError> {
        match schema {
            MIN_SCHEMA..=MAX_SCHEMA => Ok(Self { schema, ..self }),
            _ => Err(NativeHistogramError::Schema(schema)),
        }
    }

    /// These settings with `bucket_limit`.
    ///
    /// ```
    /// use gym_metrics_kit::recording::NativeConfig;
    /// assert_eq!(NativeConfig::default().with_bucket_limit(1)?.bucket_limit, 1);
    /// assert!(NativeConfig::default().with_bucket_limit(0).is_err());
    /// # Ok::<(), gym_metrics_kit::recording::NativeHistogramError>(())
    /// ```
    pub fn with_bucket_limit(self, bucket_limit: usize) -> Result<Self, NativeHistogramError> {
        match bucket_limit {
            0 => Err(NativeHistogramError::BucketLimit),
            _ => Ok(Self {
                bucket_limit,
                ..self
            }),
        }
    }
}

impl Default for NativeConfig {
    fn default() -> Self {
        Self {
            schema: DEFAULT_SCHEMA,
            bucket_limit: DEFAULT_BUCKET_LIMIT,
        }
    }
}

/// The IEEE 754 double's mantissa bits.
const MANTISSA_BITS: u32 = 52;
const MANTISSA: u64 = (1 << MANTISSA_BITS) - 1;
/// The mantissa's top bits that pick a cell: 2^9 cells, each narrower than
/// the gap between two bounds even at schema 8, so each holds at most one.
const CELL_BITS: u32 = 9;
const CELLS: usize = 1 << CELL_BITS;

/// Where the values of one unit go: the layout of one histogram's counts.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The schema counts are kept at (at least 0).
    schema: u8,
    /// The schema a scrape shows at most.
    shown: i8,
    bucket_limit: usize,
    /// The key of slot 1 (slot 0 is the zero bucket).
    first_key: i32,
    /// The last slot.
    top: usize,
    /// Values at or below this count in the zero bucket.
    zero_threshold: f64,
    /// Buckets per doubling, and what turns a key counted from the biased
    /// exponent into a slot.
    per_octave: i32,
    bias: i32,
    /// Per cell (the mantissa's top [`CELL_BITS`]): how many of the
    /// doubling's bounds (`2^(j/2^schema)` for `j` from 0, as mantissas) lie
    /// below the cell, and the one within it (`u64::MAX` for none).
    below: Box<[u16; CELLS]>,
    within: Box<[u64; CELLS]>,
}

impl Layout {
    /// The layout for durations given in whole nanoseconds, bucketed as
    /// milliseconds (the unit they are exported in): from 2^-10 ms (about
    /// 1 µs). The record path then needs no division.
    ///
    /// ```
    /// use gym_metrics_kit::recording::{Layout, NativeConfig};
    /// let layout = Layout::durations(NativeConfig::default());
    /// assert_eq!(layout.slot(0.0), 0); // zero nanoseconds: the zero bucket
    /// assert!(layout.slot(1e6) > 0); // a millisecond
    /// ```
    pub fn durations(config: NativeConfig) -> Self {
        Self::scaled(config.schema, config.bucket_limit, -10, 40, 1e6)
    }

    /// The layout for durations in seconds: from 2^-20 s (about 1 µs).
    ///
    /// ```
    /// use gym_metrics_kit::recording::{Layout, NativeConfig};
    /// let layout = Layout::seconds(NativeConfig::default());
    /// assert!(layout.slot(0.5) < layout.slot(2.0));
    /// ```
    pub fn seconds(config: NativeConfig) -> Self {
        Self::new(config.schema, config.bucket_limit, -20, 40)
    }

    /// The layout for values of any unit (a bridged `metrics` histogram's):
    /// from 2^-30 to 2^50.
    #[cfg(feature = "metrics-bridge")]
    ///
    /// ```
    /// use gym_metrics_kit::recording::{Layout, NativeConfig};
    /// let layout = Layout::any(NativeConfig::default());
    /// assert!(layout.slot(1e12) > layout.slot(1.0));
    /// ```
    pub fn any(config: NativeConfig) -> Self {
        Self::new(config.schema, config.bucket_limit, -30, 80)
    }

    /// The layout for values whose `octaves` kept doublings start at
    /// `2^lowest_octave`, at `schema` (clamped to what Prometheus takes),
    /// showing at most `bucket_limit` buckets (at least one).
    ///
    /// ```
    /// // Schema 0: one bucket per doubling, over 4 doublings from 1.
    /// let layout = gym_metrics_kit::recording::Layout::new(0, 160, 0, 4);
    /// assert_eq!(layout.slots(), 5);
    /// ```
    pub fn new(schema: i8, bucket_limit: usize, lowest_octave: i32, octaves: i32) -> Self {
        Self::scaled(schema, bucket_limit, lowest_octave, octaves, 1.0)
    }

    /// [`Layout::new`] for values given `scale` times the unit they are
    /// bucketed in. Scaling keeps the bounds' pattern within each doubling
    /// (doubling a value doubles its bound), so the same per-cell table
    /// holds: its bounds are the mantissas of `scale · 2^(j/2^schema)`, in
    /// order, and the bias counts the ones below the zero threshold's.
    ///
    /// ```
    /// use gym_metrics_kit::recording::Layout;
    /// // Nanoseconds bucketed as milliseconds, as `Layout::durations` does.
    /// let ns = Layout::scaled(0, 160, 0, 4, 1e6);
    /// let ms = Layout::new(0, 160, 0, 4);
    /// assert_eq!(ns.slot(3e6), ms.slot(3.0));
    /// ```
    pub fn scaled(
        schema: i8,
        bucket_limit: usize,
        lowest_octave: i32,
        octaves: i32,
        scale: f64,
    ) -> Self {
        let shown = schema.clamp(MIN_SCHEMA, MAX_SCHEMA);
        let schema = shown.max(0) as u8;
        let per_octave = 1i32 << schema;
        let mut bounds: Vec<u64> = (0..per_octave)
            .map(|j| (2f64.powf(f64::from(j) / f64::from(per_octave)) * scale).to_bits() & MANTISSA)
            .collect();
        bounds.sort_unstable();
        let shift = MANTISSA_BITS - CELL_BITS;
        let mut below = Box::new([0u16; CELLS]);
        let mut within = Box::new([u64::MAX; CELLS]);
        for cell in 0..CELLS {
            let (start, end) = ((cell as u64) << shift, (cell as u64 + 1) << shift);
            below[cell] = bounds.iter().filter(|&&b| b < start).count() as u16;
            if let Some(&b) = bounds.iter().find(|&&b| (start..end).contains(&b)) {
                within[cell] = b;
            }
        }
        let first_key = (lowest_octave << schema) + 1;
        // The zero threshold (exact: a power of two times `scale`) ends
        // bucket `first_key - 1`, which is slot 0.
        let threshold = (scale * 2f64.powi(lowest_octave)).to_bits();
        let below_threshold = bounds.iter().filter(|&&b| b < threshold & MANTISSA).count();
        Self {
            schema,
            shown,
            bucket_limit: bucket_limit.max(1),
            first_key,
            top: (octaves << schema) as usize,
            zero_threshold: 2f64.powi(lowest_octave),
            per_octave,
            bias: (threshold >> MANTISSA_BITS) as i32 * per_octave + below_threshold as i32,
            below,
            within,
        }
    }

    /// The number of counts a histogram of this layout keeps.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::recording::Layout::new(1, 160, 0, 3).slots(), 7);
    /// ```
    pub fn slots(&self) -> usize {
        self.top + 1
    }

    /// The slot of `value`: 0 (the zero bucket) at or below the zero
    /// threshold, the top slot above the range (NaN and negatives too: the
    /// callers pass neither, or a magnitude).
    #[inline(always)]
    ///
    /// ```
    /// let layout = gym_metrics_kit::recording::Layout::new(0, 160, 0, 4);
    /// assert_eq!([layout.slot(0.5), layout.slot(1.5), layout.slot(1e9)], [0, 1, 4]);
    /// ```
    pub fn slot(&self, value: f64) -> usize {
        (self.key(value).max(0) as usize).min(self.top)
    }

    /// The slot of `value` where it is one of the slots, else an index
    /// past them (a caller's `get` misses, and [`Layout::slot`] then clamps
    /// it): one compare fewer on the record path.
    #[inline(always)]
    pub fn unclamped_slot(&self, value: f64) -> usize {
        self.key(value) as u32 as usize
    }

    /// The slot of `value` as counted from the exponent and the cell,
    /// below 0 or past the top slot outside the range.
    #[inline(always)]
    fn key(&self, value: f64) -> i32 {
        let bits = value.to_bits();
        let mantissa = bits & MANTISSA;
        // The biased exponent; a negative value's sign bit makes it the
        // largest.
        let exponent = (bits >> MANTISSA_BITS) as i32;
        let cell = (mantissa >> (MANTISSA_BITS - CELL_BITS)) as usize;
        // The doubling's first key, then one per bound below the value.
        let key = exponent * self.per_octave
            + i32::from(self.below[cell])
            + i32::from(mantissa > self.within[cell]);
        key - self.bias
    }

    /// What a scrape shows of `counts` (one per slot): the schema lowered
    /// until the buckets in use fit the limit, and at the lowest schema the
    /// zero bucket widened until they do.
    ///
    /// ```
    /// let layout = gym_metrics_kit::recording::Layout::new(0, 1, 0, 4);
    /// // Values in (1, 2] and (4, 8], a limit of 1: they share a bucket at
    /// // schema -2, where one bucket spans four doublings.
    /// let reading = layout.reading(&[0, 1, 0, 1, 0]);
    /// assert_eq!(reading.schema, -2);
    /// ```
    pub fn reading(&self, counts: &[u64]) -> Reading {
        let mut positive = Side {
            first_key: self.first_key,
            counts: counts.get(1..).unwrap_or_default().to_vec(),
        };
        let mut schema = i32::from(self.schema);
        let in_use = |s: &Side| s.counts.iter().filter(|&&c| c != 0).count();
        while schema > i32::from(self.shown)
            || (in_use(&positive) > self.bucket_limit && schema > i32::from(MIN_SCHEMA))
        {
            positive = positive.lowered();
            schema -= 1;
        }
        let mut reading = Reading {
            schema: schema as i8,
            zero_threshold: self.zero_threshold,
            zero_count: counts.first().copied().unwrap_or(0),
            positive,
        };
        // At the lowest schema and still over the limit: widen the zero
        // bucket, as client_golang does when its schema can go no lower.
        if in_use(&reading.positive) > self.bucket_limit {
            reading.widen_zero_bucket(self.bucket_limit);
        }
        reading
    }
}

/// A native histogram's buckets as a scrape shows them.
///
/// ```
/// use gym_metrics_kit::recording::{Layout, NativeConfig};
/// let layout = Layout::seconds(NativeConfig::default());
/// let mut counts = vec![0; layout.slots()];
/// counts[layout.slot(0.25)] += 1;
/// let reading = layout.reading(&counts);
/// assert_eq!((reading.schema, reading.zero_count), (3, 0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The schema shown: the configured one, or lower to fit the limit.
    pub schema: i8,
    /// Values at or below this count in the zero bucket.
    pub zero_threshold: f64,
    /// The zero bucket's count.
    pub zero_count: u64,
    /// The buckets above the zero bucket (the values are never negative).
    pub positive: Side,
}

impl Reading {
    /// This reading with at most `width` buckets from its lowest in use to
    /// its highest, zeros between included (what OpenTelemetry's exponential
    /// histograms count as their size, 160 by default): the schema is
    /// lowered, merging neighbours, until they fit or it reaches -10.
    ///
    /// ```
    /// let layout = gym_metrics_kit::recording::Layout::new(0, 160, 0, 8);
    /// let dense = layout.reading(&[0, 1, 0, 0, 0, 0, 0, 1, 0]).within_width(2);
    /// assert_eq!((dense.schema, dense.positive.counts.iter().sum::<u64>()), (-2, 2));
    /// ```
    pub fn within_width(mut self, width: usize) -> Self {
        let used = |side: &Side| {
            let first = side.counts.iter().position(|&c| c != 0);
            let last = side.counts.iter().rposition(|&c| c != 0);
            first.zip(last).map_or(0, |(f, l)| l - f + 1)
        };
        while used(&self.positive) > width.max(1) && self.schema > -10 {
            self.positive = self.positive.lowered();
            self.schema -= 1;
        }
        self
    }

    /// Folds the lowest buckets in use into the zero bucket until at most
    /// `limit` are left: the zero threshold becomes the upper bound of the
    /// last bucket folded (`2^(key · 2^-schema)`), so each value still lies
    /// in the bucket that counts it, and the zero bucket's count takes
    /// theirs (the total is unchanged).
    fn widen_zero_bucket(&mut self, limit: usize) {
        let side = &mut self.positive;
        let mut in_use = side.counts.iter().filter(|&&c| c != 0).count();
        let mut folded = 0;
        for &c in &side.counts {
            if in_use <= limit {
                break;
            }
            folded += 1;
            if c != 0 {
                self.zero_count = self.zero_count.wrapping_add(c);
                in_use -= 1;
            }
        }
        if folded == 0 {
            return;
        }
        let last_folded = side.first_key + folded as i32 - 1;
        // The bucket's upper bound, exact at the schemas a widening happens
        // at (the lowest: `2^(16 · key)`).
        let schema = i32::from(self.schema);
        self.zero_threshold = if schema <= 0 {
            2f64.powi(last_folded.saturating_mul(1 << -schema))
        } else {
            2f64.powf(f64::from(last_folded) / f64::from(1 << schema))
        };
        side.counts.drain(..folded);
        side.first_key = last_folded + 1;
    }

    /// The values counted: the zero bucket's and every bucket's.
    pub fn total(&self) -> u64 {
        (self.positive.counts.iter()).fold(self.zero_count, |total, &c| total.wrapping_add(c))
    }
}

/// Buckets from a key on.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The key of `counts[0]`.
    pub first_key: i32,
    /// One count per bucket, from `first_key` on (zeros included).
    pub counts: Vec<u64>,
}

impl Side {
    /// These buckets one schema lower: bucket `k` lies within bucket
    /// `(k + 1) >> 1` there.
    fn lowered(self) -> Self {
        let first_key = (self.first_key + 1) >> 1;
        let last_key = (self.first_key + self.counts.len() as i32) >> 1;
        let mut counts = vec![0u64; (last_key - first_key + 1).max(0) as usize];
        for (key, &c) in (self.first_key..).zip(&self.counts) {
            let at = (((key + 1) >> 1) - first_key) as usize;
            counts[at] = counts[at].wrapping_add(c);
        }
        Self { first_key, counts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bucket key Prometheus gives `v` at `schema`, written plainly.
    fn oracle(v: f64, schema: i32) -> i32 {
        (v.log2() * 2f64.powi(schema)).ceil() as i32
    }

    #[test]
    fn values_land_where_prometheus_puts_them() {
        for schema in 0..=8 {
            let layout = Layout::new(schema as i8, usize::MAX, -10, 40);
            let mut v = 0.0011f64;
            while v < 1e9 {
                let key = oracle(v, schema);
                // Clear of the bounds, where log2's rounding could disagree.
                let exact_bound = (v.log2() * f64::from(1 << schema)).fract().abs() < 1e-9;
                if !exact_bound {
                    let slot = layout.slot(v);
                    assert_eq!(
                        slot as i32,
                        key - layout.first_key + 1,
                        "{v} at schema {schema}"
                    );
                }
                v *= 1.0137;
            }
        }
    }

    #[test]
    fn a_bound_belongs_to_the_bucket_it_ends() {
        let layout = Layout::new(3, usize::MAX, -10, 40);
        for k in -70..170 {
            let bound = 2f64.powf(f64::from(k) / 8.0);
            let slot = layout.slot(bound) as i32;
            // The computed bound may be one ulp off the true one.
            let key = slot + layout.first_key - 1;
            assert!((key - k).abs() <= 1, "{bound}: {key} vs {k}");
            if k % 8 == 0 {
                assert_eq!(key, k, "a power of two, {bound}, is exact");
            }
        }
    }

    #[test]
    fn the_ends_and_odd_values_are_clamped() {
        let layout = Layout::new(3, usize::MAX, -10, 40);
        let top = layout.slots() - 1;
        for (v, slot) in [
            (0.0, 0),
            (2f64.powi(-10), 0),
            (f64::MIN_POSITIVE / 2.0, 0),
            (f64::NAN, top),
            (-1.0, top),
            (1e30, top),
            (f64::INFINITY, top),
            (2f64.powi(30), top),
        ] {
            assert_eq!(layout.slot(v), slot, "{v}");
        }
        assert_eq!(layout.slot(2f64.powi(-10) * 1.01), 1);
    }

    #[test]
    fn nanoseconds_land_where_their_milliseconds_do() {
        for schema in -4..=8 {
            let config = NativeConfig::default().with_schema(schema).unwrap();
            let (nanos, millis) = (Layout::durations(config), Layout::new(schema, 160, -10, 40));
            assert_eq!(
                (nanos.slots(), nanos.zero_threshold),
                (millis.slots(), millis.zero_threshold)
            );
            let mut n = 1u64;
            while n < 1 << 62 {
                let ms = n as f64 / 1e6;
                let bucket_edge = (ms.log2() * f64::from(1 << schema.max(0))).fract().abs();
                // Clear of the bounds, where the two roundings could disagree.
                if bucket_edge > 1e-9 && bucket_edge < 1.0 - 1e-9 {
                    assert_eq!(
                        nanos.slot(n as f64),
                        millis.slot(ms),
                        "{n} ns at schema {schema}"
                    );
                }
                n = n + n / 61 + 1;
            }
            // A power of two milliseconds ends its bucket in both.
            for k in -10..30 {
                let ms = 2f64.powi(k);
                assert_eq!(
                    nanos.slot(ms * 1e6),
                    millis.slot(ms),
                    "2^{k} ms at schema {schema}"
                );
            }
        }
    }

    #[test]
    fn an_unclamped_slot_past_the_ends_misses() {
        let layout = Layout::durations(NativeConfig::default());
        for n in [0.0, 976.0, 1e6, 1e15, 1e17, -1.0, f64::NAN] {
            let slot = layout.slot(n);
            match layout.unclamped_slot(n) {
                unclamped if unclamped < layout.slots() => assert_eq!(unclamped, slot, "{n}"),
                _ => assert!(slot == 0 || slot == layout.slots() - 1, "{n}: {slot}"),
            }
        }
        assert_eq!(layout.unclamped_slot(1e6), layout.slot(1e6));
        assert!(layout.unclamped_slot(0.0) >= layout.slots());
    }

    #[test]
    fn a_scrape_lowers_the_schema_to_fit_the_limit_and_keeps_every_count() {
        let layout = Layout::new(3, 4, -10, 40);
        let mut counts = vec![0u64; layout.slots()];
        for v in [1.0, 1.1, 1.3, 1.6, 1.9, 2.5, 3.0, 100.0] {
            counts[layout.slot(v)] += 1;
        }
        counts[0] = 2;
        let r = layout.reading(&counts);
        assert!(r.schema < 3, "{r:?}");
        assert!(
            r.positive.counts.iter().filter(|&&c| c != 0).count() <= 4,
            "{r:?}"
        );
        let p = &r.positive;
        assert_eq!((r.zero_count, p.counts.iter().sum::<u64>()), (2, 8));
        // Every value is counted in its own bucket at the lowered schema.
        for v in [1.0, 1.1, 1.3, 1.6, 1.9, 2.5, 3.0, 100.0] {
            let at = oracle(v, i32::from(r.schema)) - p.first_key;
            assert_ne!(p.counts[at as usize], 0, "{v} in {r:?}");
        }
        // A negative schema is shown merged from schema 0.
        let coarse = Layout::new(-2, usize::MAX, -10, 40);
        let mut counts = vec![0u64; coarse.slots()];
        counts[coarse.slot(5.0)] += 1;
        let r = coarse.reading(&counts);
        assert_eq!(r.schema, -2);
        let p = &r.positive;
        let key = p.first_key + p.counts.iter().position(|&c| c == 1).unwrap() as i32;
        // Schema -2: bucket 1 is (1, 16].
        assert_eq!(key, 1);
    }

    /// The buckets in use of `r`.
    fn in_use(r: &Reading) -> usize {
        r.positive.counts.iter().filter(|&&c| c != 0).count()
    }

    #[test]
    fn at_the_lowest_schema_the_zero_bucket_widens_until_the_limit_holds() {
        // A bridged layout (2^-30 to 2^50): schema -4 alone leaves six
        // buckets in use, one value in each; a limit of 1 keeps the top one.
        let layout = Layout::new(-4, 1, -30, 80);
        let values = [1e-8, 1e-3, 10.0, 1e6, 1e11, 1e15];
        let mut counts = vec![0u64; layout.slots()];
        for v in values {
            counts[layout.slot(v)] += 1;
        }
        counts[0] = 3; // three values at or below 2^-30
        let r = layout.reading(&counts);
        assert_eq!((r.schema, in_use(&r)), (MIN_SCHEMA, 1), "{r:?}");
        assert_eq!((r.total(), r.zero_count), (9, 8), "{r:?}");
        // The top value's bucket at schema -4 is key 4, (2^48, 2^64]: 1e15
        // is in it, and the zero bucket ends where it starts.
        let key =
            r.positive.first_key + r.positive.counts.iter().position(|&c| c != 0).unwrap() as i32;
        assert_eq!((key, oracle(1e15, -4)), (4, 4));
        assert_eq!(r.zero_threshold, 2f64.powi(48));
        assert!(values[..5].iter().all(|&v| v <= r.zero_threshold));
        // Two allowed: the two highest remain, the zero bucket ends at 2^32.
        let r = Layout::new(-4, 2, -30, 80).reading(&counts);
        assert_eq!(
            (in_use(&r), r.zero_count, r.zero_threshold),
            (2, 7, 2f64.powi(32))
        );
        // Within the limit at -4 already: the zero bucket is left alone.
        let r = Layout::new(-4, 6, -30, 80).reading(&counts);
        assert_eq!(
            (in_use(&r), r.zero_count, r.zero_threshold),
            (6, 3, 2f64.powi(-30))
        );
        // A duration layout, at any schema it starts from, limit 1.
        for schema in [-4, 0, 3, 8] {
            let layout = Layout::durations(NativeConfig {
                schema,
                bucket_limit: 1,
            });
            let mut counts = vec![0u64; layout.slots()];
            for ms in [0.01f64, 1.0, 300.0, 7e4, 1e8] {
                counts[layout.slot(ms * 1e6)] += 1;
            }
            let r = layout.reading(&counts);
            assert_eq!(
                (r.schema, in_use(&r), r.total()),
                (MIN_SCHEMA, 1, 5),
                "{schema}: {r:?}"
            );
        }
    }

    /// A value of any magnitude a layout sees, zero included.
    fn any_magnitude() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        prop_oneof![
            1 => Just(0.0),
            1 => Just(f64::MAX),
            8 => (-45i32..60, 0.0f64..1.0).prop_map(|(e, m)| 2f64.powi(e) * (1.0 + m)),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, failure_persistence: None, ..Default::default() })]

        /// Any values, any schema Prometheus takes, any limit of 1 or more:
        /// the buckets in use fit the limit, every value is counted once
        /// (the count a scrape writes is the zero bucket's plus every
        /// bucket's), and each lies in the bucket that counts it.
        #[test]
        fn any_values_any_schema_any_limit_fit_and_keep_every_count(
            values in proptest::collection::vec(any_magnitude(), 0..300),
            schema in MIN_SCHEMA..=MAX_SCHEMA,
            limit in proptest::prop_oneof![1usize..8, 1usize..400],
            range in 0usize..3,
        ) {
            let (lowest, octaves) = [(-10, 40), (-20, 40), (-30, 80)][range];
            let layout = Layout::new(schema, limit, lowest, octaves);
            let mut counts = vec![0u64; layout.slots()];
            for &v in &values {
                counts[layout.slot(v)] += 1;
            }
            let r = layout.reading(&counts);
            proptest::prop_assert!(in_use(&r) <= limit, "{} > {limit}: {r:?}", in_use(&r));
            proptest::prop_assert_eq!(r.total(), values.len() as u64);
            proptest::prop_assert_eq!(
                r.total(),
                r.zero_count + r.positive.counts.iter().sum::<u64>()
            );
            proptest::prop_assert!(r.schema <= schema.max(MIN_SCHEMA));
            proptest::prop_assert!(r.zero_threshold >= 2f64.powi(lowest));
            // A widened zero bucket ends where the first bucket starts.
            let width = 2f64.powi(-i32::from(r.schema));
            if r.zero_threshold > 2f64.powi(lowest) {
                proptest::prop_assert_eq!(r.schema, MIN_SCHEMA);
                let first_lower = 2f64.powf(f64::from(r.positive.first_key - 1) * width);
                proptest::prop_assert_eq!(first_lower, r.zero_threshold, "{:?}", r);
            }
            // Each value within the range, clear of a bound, is in the zero
            // bucket or in a bucket in use at its key.
            let top = 2f64.powi(lowest + octaves);
            for &v in &values {
                let at = v.log2() / width;
                if v <= 2f64.powi(lowest) || v >= top || (at - at.round()).abs() < 1e-9 {
                    continue;
                }
                let key = oracle(v, i32::from(r.schema));
                let counted = usize::try_from(key - r.positive.first_key)
                    .ok()
                    .and_then(|i| r.positive.counts.get(i))
                    .is_some_and(|&c| c != 0);
                proptest::prop_assert!(counted || v <= r.zero_threshold, "{v}: {r:?}");
            }
        }
    }

    /// The `q` quantile of the values counted in `r`, as Prometheus
    /// estimates it: the bucket where the rank falls, then the point within
    /// it by the rank's share, on a log scale as the buckets are.
    fn native_quantile(r: &Reading, q: f64) -> f64 {
        let total: u64 = r.positive.counts.iter().sum::<u64>() + r.zero_count;
        let rank = q * total as f64;
        let mut seen = r.zero_count as f64;
        let base = 2f64.powf(2f64.powi(-i32::from(r.schema)));
        for (key, &c) in (r.positive.first_key..).zip(&r.positive.counts) {
            if c > 0 && seen + c as f64 >= rank {
                let upper = base.powi(key);
                return upper / base * base.powf((rank - seen) / c as f64);
            }
            seen += c as f64;
        }
        f64::NAN
    }

    /// The same from classic buckets (`le` bounds, `+Inf` last), linear
    /// within a bucket as `histogram_quantile` is.
    fn classic_quantile(bounds: &[f64], values: &[f64], q: f64) -> f64 {
        let rank = q * values.len() as f64;
        let mut lower = 0.0;
        let mut seen = 0.0;
        for &upper in bounds {
            let c = values.iter().filter(|&&v| v > lower && v <= upper).count() as f64;
            if seen + c >= rank {
                return lower + (upper - lower) * (rank - seen) / c;
            }
            (seen, lower) = (seen + c, upper);
        }
        lower
    }

    #[test]
    fn native_quantiles_stay_within_a_bucket_where_the_ladder_cannot() {
        // A demo-like spread (about 0.1 to 3 s) and a heavy tail (a
        // Pareto from 20 ms, reaching past an hour), from a fixed LCG.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let demo: Vec<f64> = (0..20_000).map(|_| 100.0 + 2900.0 * uniform()).collect();
        let tail: Vec<f64> = (0..20_000)
            .map(|_| 20.0 / uniform().powf(1.0 / 0.6))
            .collect();
        let bounds = gym_metrics_api::backend::Instrument::DEFAULT_DURATION_BOUNDARIES_MS;
        let layout = Layout::durations(NativeConfig::default());
        for (name, values) in [("demo", demo), ("heavy tail", tail)] {
            let mut counts = vec![0u64; layout.slots()];
            for &v in &values {
                counts[layout.slot((v * 1e6).round())] += 1;
            }
            let reading = layout.reading(&counts);
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            for q in [0.5, 0.95, 0.99] {
                let exact = sorted[(q * sorted.len() as f64) as usize - 1];
                let native = native_quantile(&reading, q) / exact - 1.0;
                let classic = classic_quantile(&bounds, &values, q) / exact - 1.0;
                eprintln!(
                    "{name} p{}: native {:+.2} %, classic {:+.2} %",
                    q * 100.0,
                    native * 100.0,
                    classic * 100.0
                );
                // Half a bucket (about 4.4 %) and the spread within it.
                assert!(native.abs() < 0.05, "{name} p{q}: native {native}");
            }
        }
    }
}
