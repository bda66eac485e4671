//! A bridged histogram's series: the atomics a `metrics` handle holds and
//! records into directly, with no lookup (the handle is an `Arc` of it;
//! counters and gauges are the kit's cells).

use std::sync::atomic::{AtomicU64, Ordering};

use metrics::HistogramFn;

/// A histogram's counts per bucket (the last is `+Inf`) and its sum.
#[derive(Debug)]
pub struct HistogramSeries {
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
