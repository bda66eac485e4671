//! One series of a bridged family: the atomics a `metrics` handle holds and
//! records into directly, with no lookup (the handle is an `Arc` of these).

use std::sync::atomic::{AtomicU64, Ordering};

use metrics::{CounterFn, GaugeFn, HistogramFn};

/// A counter's value.
#[derive(Debug, Default)]
pub(crate) struct CounterSeries(AtomicU64);

impl CounterSeries {
    pub(crate) fn value(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl CounterFn for CounterSeries {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        // A counter never goes down: an older absolute value is ignored.
        self.0.fetch_max(value, Ordering::Relaxed);
    }
}

/// A gauge's value, as `f64` bits.
#[derive(Debug, Default)]
pub(crate) struct GaugeSeries(AtomicU64);

impl GaugeSeries {
    pub(crate) fn value(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }

    fn add(&self, delta: f64) {
        // The closure always returns Some: the update cannot fail.
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + delta).to_bits())
            });
    }
}

impl GaugeFn for GaugeSeries {
    fn increment(&self, value: f64) {
        self.add(value);
    }

    fn decrement(&self, value: f64) {
        self.add(-value);
    }

    fn set(&self, value: f64) {
        self.0.store(value.to_bits(), Ordering::Relaxed);
    }
}

/// A histogram's counts per bucket (the last is `+Inf`) and its sum.
#[derive(Debug)]
pub(crate) struct HistogramSeries {
    bounds: Box<[f64]>,
    buckets: Box<[AtomicU64]>,
    sum: AtomicU64,
}

/// What a scrape reads of a histogram: cumulative bucket counts (the last is
/// the count) and the sum.
#[derive(Debug, PartialEq)]
pub(crate) struct HistogramReading {
    pub(crate) cumulative: Vec<u64>,
    pub(crate) sum: f64,
}

impl HistogramSeries {
    /// An empty histogram over these (validated) upper bounds.
    pub(crate) fn new(bounds: &[f64]) -> Self {
        Self {
            bounds: bounds.into(),
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0.0f64.to_bits()),
        }
    }

    pub(crate) fn read(&self) -> HistogramReading {
        let mut running = 0u64;
        let cumulative = self
            .buckets
            .iter()
            .map(|b| {
                running = running.saturating_add(b.load(Ordering::Relaxed));
                running
            })
            .collect();
        HistogramReading {
            cumulative,
            sum: f64::from_bits(self.sum.load(Ordering::Relaxed)),
        }
    }

    fn observe(&self, value: f64, times: u64) {
        // NaN has no bucket (and would make the sum NaN for ever): dropped.
        if value.is_nan() {
            return;
        }
        let index = self.bounds.partition_point(|&bound| bound < value);
        if let Some(bucket) = self.buckets.get(index) {
            bucket.fetch_add(times, Ordering::Relaxed);
        }
        let _ = self
            .sum
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + value * times as f64).to_bits())
            });
    }
}

impl HistogramFn for HistogramSeries {
    fn record(&self, value: f64) {
        self.observe(value, 1);
    }

    fn record_many(&self, value: f64, count: usize) {
        self.observe(value, count as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_adds_and_takes_the_larger_absolute_value() {
        let c = CounterSeries::default();
        c.increment(3);
        c.absolute(2);
        assert_eq!(c.value(), 3);
        c.absolute(10);
        assert_eq!(c.value(), 10);
    }

    #[test]
    fn a_gauge_sets_adds_and_subtracts() {
        let g = GaugeSeries::default();
        g.set(2.5);
        g.increment(1.0);
        g.decrement(0.5);
        assert_eq!(g.value(), 3.0);
    }

    #[test]
    fn a_histogram_buckets_le_inclusive_drops_nan_and_sums() {
        let h = HistogramSeries::new(&[1.0, 10.0]);
        h.record(1.0);
        h.record(5.0);
        h.record_many(20.0, 2);
        h.record(f64::NAN);
        assert_eq!(
            h.read(),
            HistogramReading {
                cumulative: vec![1, 2, 4],
                sum: 46.0
            }
        );
    }
}
