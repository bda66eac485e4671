//! A bridged histogram's series: the atomics a `metrics` handle holds and
//! records into directly, with no lookup (the handle is an `Arc` of it;
//! counters and gauges are the kit's cells).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use metrics::HistogramFn;

use gym_metrics_kit::recording::{Layout, Reading};

/// A histogram's counts per bucket (the last is `+Inf`), per native slot,
/// and its sum. Its values are finite and never negative (the kit's
/// `HistogramCell` drops the others first).
#[derive(Debug)]
pub struct HistogramSeries {
    bounds: Box<[f64]>,
    buckets: Box<[AtomicU64]>,
    sum: AtomicU64,
    layout: Arc<Layout>,
    native: Box<[AtomicU64]>,
}

/// What a scrape reads of a histogram: cumulative bucket counts (the last is
/// the count), the sum and the native buckets.
#[derive(Debug, PartialEq)]
pub(crate) struct HistogramReading {
    pub(crate) cumulative: Vec<u64>,
    pub(crate) sum: f64,
    pub(crate) native: Reading,
}

/// `n` counts at zero.
fn zeros(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

impl HistogramSeries {
    /// An empty histogram over these (validated) upper bounds, its native
    /// buckets laid out as `layout`.
    pub(crate) fn new(bounds: &[f64], layout: Arc<Layout>) -> Self {
        Self {
            bounds: bounds.into(),
            buckets: zeros(bounds.len() + 1),
            sum: AtomicU64::new(0.0f64.to_bits()),
            native: zeros(layout.slots()),
            layout,
        }
    }

    pub(crate) fn read(&self) -> HistogramReading {
        // The native counts first (acquire, each added after its bucket's
        // count, release): their total is then at most the count.
        let load = |counts: &[AtomicU64]| -> Vec<u64> {
            counts.iter().map(|c| c.load(Ordering::Acquire)).collect()
        };
        let native = self.layout.reading(&load(&self.native));
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
            native,
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
        if let Some(count) = self.native.get(self.layout.slot(value)) {
            count.fetch_add(times, Ordering::Release);
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
        let layout = Arc::new(Layout::any(
            gym_metrics_kit::recording::NativeConfig::default(),
        ));
        let h = HistogramSeries::new(&[1.0, 10.0], layout);
        h.record(1.0);
        h.record(5.0);
        h.record_many(20.0, 2);
        h.record(f64::NAN);
        let r = h.read();
        assert_eq!((r.cumulative, r.sum), (vec![1, 2, 4], 46.0));
        // Native: 1, 5 and 20 (twice), each in its own bucket.
        let p = &r.native.positive;
        assert_eq!((p.counts.iter().sum::<u64>(), r.native.total()), (4, 4));
        let key = |v: f64| (v.log2() * 8.0).ceil() as i32;
        let at = |v: f64| p.counts[(key(v) - p.first_key) as usize];
        assert_eq!((at(1.0), at(5.0), at(20.0)), (1, 1, 2));
    }
}
