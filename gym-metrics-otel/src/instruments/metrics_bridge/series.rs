//! One series of a bridged instrument: what a `metrics` handle holds (an
//! `Arc` of it) and records through with no lookup of ours: the SDK
//! instrument and the series' attributes, built once at registration.

use gym_metrics_kit::bridge::{CounterCell, CounterSink, GaugeCell};
use metrics::HistogramFn;
use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::KeyValue;

/// An SDK instrument and the attributes of one of its series.
#[derive(Debug)]
pub struct Attributed<I> {
    instrument: I,
    attributes: Vec<KeyValue>,
}

impl<I> Attributed<I> {
    pub(crate) fn new(instrument: I, attributes: Vec<KeyValue>) -> Self {
        Self {
            instrument,
            attributes,
        }
    }
}

/// A counter series: the total so far (so that `absolute` adds only what
/// is new) and the SDK `u64` counter it adds to.
pub type CounterSeries = CounterCell<Attributed<Counter<u64>>>;

/// A gauge series: its value, read by the instrument's callback at each
/// collection (see `storage.rs` for why an observable gauge), and its
/// attributes.
pub type GaugeSeries = GaugeCell<Vec<KeyValue>>;

/// A histogram series: an SDK `f64` histogram (its boundaries chosen when it
/// was built) and its attributes.
pub type HistogramSeries = Attributed<Histogram<f64>>;

impl CounterSink for Attributed<Counter<u64>> {
    fn add(&self, delta: u64) {
        self.instrument.add(delta, &self.attributes);
    }
}

impl HistogramFn for HistogramSeries {
    fn record(&self, value: f64) {
        self.instrument.record(value, &self.attributes);
    }
}
