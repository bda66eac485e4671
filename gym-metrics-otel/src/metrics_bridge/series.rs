//! One series of a bridged instrument: what a `metrics` handle holds (an
//! `Arc` of it) and records through with no lookup of ours: the SDK
//! instrument and the series' attributes, built once at registration.

use std::sync::atomic::{AtomicU64, Ordering};

use metrics::{CounterFn, GaugeFn, HistogramFn};
use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::KeyValue;

/// A counter series: an SDK `u64` counter and its attributes, and the total
/// added so far (so that `absolute` can add only what is new).
#[derive(Debug)]
pub(crate) struct CounterSeries {
    counter: Counter<u64>,
    attributes: Vec<KeyValue>,
    total: AtomicU64,
}

impl CounterSeries {
    pub(crate) fn new(counter: Counter<u64>, attributes: Vec<KeyValue>) -> Self {
        Self {
            counter,
            attributes,
            total: AtomicU64::new(0),
        }
    }
}

impl CounterFn for CounterSeries {
    fn increment(&self, value: u64) {
        self.total.fetch_add(value, Ordering::Relaxed);
        self.counter.add(value, &self.attributes);
    }

    fn absolute(&self, value: u64) {
        // A counter never goes down: an absolute value below the total so
        // far adds nothing (as on the Prometheus path), one above it adds
        // the difference.
        let before = self.total.fetch_max(value, Ordering::Relaxed);
        if value > before {
            self.counter.add(value - before, &self.attributes);
        }
    }
}

/// A gauge series: its value as `f64` bits, read by the instrument's
/// callback at each collection (see `registry.rs` for why an observable
/// gauge), and its attributes.
#[derive(Debug)]
pub(crate) struct GaugeSeries {
    bits: AtomicU64,
    attributes: Vec<KeyValue>,
}

impl GaugeSeries {
    pub(crate) fn new(attributes: Vec<KeyValue>) -> Self {
        Self {
            bits: AtomicU64::new(0.0f64.to_bits()),
            attributes,
        }
    }

    /// The value now, and the attributes to report it with.
    pub(crate) fn reading(&self) -> (f64, &[KeyValue]) {
        (
            f64::from_bits(self.bits.load(Ordering::Relaxed)),
            &self.attributes,
        )
    }

    fn add(&self, delta: f64) {
        // The closure always returns Some: the update cannot fail.
        let _ = self
            .bits
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
        self.bits.store(value.to_bits(), Ordering::Relaxed);
    }
}

/// A histogram series: an SDK `f64` histogram (its boundaries chosen when it
/// was built) and its attributes.
#[derive(Debug)]
pub(crate) struct HistogramSeries {
    histogram: Histogram<f64>,
    attributes: Vec<KeyValue>,
}

impl HistogramSeries {
    pub(crate) fn new(histogram: Histogram<f64>, attributes: Vec<KeyValue>) -> Self {
        Self {
            histogram,
            attributes,
        }
    }
}

impl HistogramFn for HistogramSeries {
    fn record(&self, value: f64) {
        self.histogram.record(value, &self.attributes);
    }
}
