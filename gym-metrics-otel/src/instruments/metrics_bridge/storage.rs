//! The bridge's storage on the OpenTelemetry path: each bridged `metrics`
//! name is an SDK instrument of the scope `metrics`, on the backend's meter
//! provider.
//!
//! - Counters are SDK `u64` counters.
//! - Gauges are SDK `f64` *observable* gauges: each series keeps its value in
//!   an atomic (`set`, `increment` and `decrement` are one atomic operation,
//!   as on the Prometheus path) and the instrument's callback reports every
//!   series' value at collection. A synchronous SDK gauge would need the
//!   value recorded after each `increment`, and two threads recording the
//!   values they computed could land in the wrong order, leaving the export
//!   a step behind; an up-down counter could not take `set`.
//! - Histograms are SDK `f64` histograms whose explicit boundaries are the
//!   bucket rule's for the name (the instrument builder's `with_boundaries`),
//!   the same buckets as on the Prometheus path.
//!
//! The kit's registry decides the cardinality limit (and the byte budgets)
//! at registration, as on the Prometheus path; its overflow series has the one attribute
//! `otel.metric.overflow=true`, the attribute set the SDK's own cardinality
//! limit (opentelemetry_sdk 0.33) uses for its overflow series. The SDK
//! decides at measurement time, silently as far as we are concerned (no
//! count, no log of ours), so it cannot give `MetricsBridgeStats::overflowed`;
//! the SDK's limit for the scope `metrics` is set one above ours (our
//! overflow series is one of its series) by a view
//! ([`super::cardinality_view`]), and so never folds a series before we do.

use std::sync::{Arc, PoisonError, RwLock};

use gym_metrics_api::backend::InstrumentKind;
use gym_metrics_kit::bridge::{
    CounterCell, GaugeCell, HistogramCell, InstrumentSpec, Series, SeriesLabels, Storage,
};
use opentelemetry::metrics::{Counter, Histogram, Meter, ObservableGauge};
use opentelemetry::KeyValue;

use super::instrument_name::otel_name_problem;
use super::series::{Attributed, CounterSeries, GaugeSeries, HistogramSeries};
use crate::export::export_log::LOG_TARGET;

/// The attribute of the one series an instrument's label sets past the
/// cardinality limit record into (the SDK's and the specification's).
const OVERFLOW_ATTRIBUTE: &str = "otel.metric.overflow";

/// The bridge's storage: the meter of the scope `metrics`.
#[derive(Debug)]
pub struct OtelStorage {
    pub(crate) meter: Meter,
}

/// The series of a gauge its callback reports.
type GaugeSet = Arc<RwLock<Vec<Arc<GaugeSeries>>>>;

/// The SDK instrument of one bridged `metrics` name.
pub enum SdkInstrument {
    /// A counter's.
    Counter(Counter<u64>),
    /// A gauge's series, and its instrument.
    Gauge {
        series: GaugeSet,
        /// Kept so that the callback stays the instrument's for the bridge's life.
        _instrument: ObservableGauge<f64>,
    },
    /// A histogram's.
    Histogram(Histogram<f64>),
}

impl Storage for OtelStorage {
    type Instrument = SdkInstrument;
    type Counter = CounterSeries;
    type Gauge = GaugeSeries;
    type Histogram = HistogramSeries;
    const LOG_TARGET: &'static str = LOG_TARGET;
    const ONE_INSTRUMENT_PER_FAMILY: bool = false;

    fn name_problem(&self, name: &str) -> Option<&'static str> {
        otel_name_problem(name)
    }

    fn instrument(&self, spec: &InstrumentSpec<'_>) -> SdkInstrument {
        let name = spec.name.to_string();
        let help = spec.help.to_string();
        let unit = spec.unit.unwrap_or_default();
        match spec.kind {
            InstrumentKind::Counter => SdkInstrument::Counter(
                self.meter
                    .u64_counter(name)
                    .with_description(help)
                    .with_unit(unit)
                    .build(),
            ),
            InstrumentKind::Gauge => {
                let series: GaugeSet = Arc::default();
                let read = Arc::clone(&series);
                let instrument = self
                    .meter
                    .f64_observable_gauge(name)
                    .with_description(help)
                    .with_unit(unit)
                    .with_callback(move |observer| {
                        for one in read.read().unwrap_or_else(PoisonError::into_inner).iter() {
                            let (value, attributes) = one.reading();
                            observer.observe(value, attributes);
                        }
                    })
                    .build();
                SdkInstrument::Gauge {
                    series,
                    _instrument: instrument,
                }
            }
            InstrumentKind::Histogram => SdkInstrument::Histogram(
                self.meter
                    .f64_histogram(name)
                    .with_description(help)
                    .with_unit(unit)
                    .with_boundaries(spec.bounds.to_vec())
                    .build(),
            ),
        }
    }

    fn series(
        &self,
        sdk: &SdkInstrument,
        _: InstrumentKind,
        labels: SeriesLabels<'_>,
    ) -> Series<Self> {
        let attributes = match labels {
            SeriesLabels::Of(labels) => labels
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect(),
            SeriesLabels::Overflow => vec![KeyValue::new(OVERFLOW_ATTRIBUTE, true)],
        };
        match sdk {
            SdkInstrument::Counter(c) => Series::Counter(Arc::new(CounterCell::new(
                Attributed::new(c.clone(), attributes),
            ))),
            SdkInstrument::Gauge { series, .. } => {
                let one = Arc::new(GaugeCell::new(attributes));
                series
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Arc::clone(&one));
                Series::Gauge(one)
            }
            SdkInstrument::Histogram(h) => Series::Histogram(Arc::new(HistogramCell::new(
                Attributed::new(h.clone(), attributes),
            ))),
        }
    }

    /// The SDK instrument keeps the unit and description it was made with.
    fn described_late(&self, _: &mut SdkInstrument, name: &str, _help: &str) {
        log::debug!(
            target: LOG_TARGET,
            "metrics instrument {name:?} was described after its first use: its OpenTelemetry \
             instrument keeps the unit and description it was made with",
        );
    }
}
