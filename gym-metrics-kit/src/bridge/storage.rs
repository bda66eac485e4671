//! What a backend supplies to the one `metrics` bridge: how an instrument
//! and its series are made in its storage. Everything else (which names are
//! exported, the series by label set, the cardinality limit and its overflow
//! series, bucket rules, the counts) is the kit's [`Instruments`](super::Instruments).

use gym_metrics_api::backend::InstrumentKind;
use metrics::{CounterFn, GaugeFn, HistogramFn};
use std::sync::Arc;

use super::HistogramCell;

/// A series' labels, sorted by name: the identity of a series.
pub type Labels = Vec<(String, String)>;

/// One series of any kind, as a `metrics` handle holds it.
#[derive(Debug)]
pub enum Series<S: Storage + ?Sized> {
    /// A counter's.
    Counter(Arc<S::Counter>),
    /// A gauge's.
    Gauge(Arc<S::Gauge>),
    /// A histogram's, behind the kit's one rule for the values it takes
    /// ([`HistogramCell`]: finite and non-negative).
    Histogram(Arc<HistogramCell<S::Histogram>>),
}

impl<S: Storage + ?Sized> Clone for Series<S> {
    fn clone(&self) -> Self {
        match self {
            Series::Counter(c) => Series::Counter(Arc::clone(c)),
            Series::Gauge(g) => Series::Gauge(Arc::clone(g)),
            Series::Histogram(h) => Series::Histogram(Arc::clone(h)),
        }
    }
}

/// Which series of an instrument [`Storage::series`] makes.
#[derive(Debug, Clone, Copy)]
pub enum SeriesLabels<'a> {
    /// The series of these labels ([`Storage::labels`]' result).
    Of(&'a [(String, String)]),
    /// The one series every label set past the cardinality limit records
    /// into (`otel.metric.overflow=true`, `otel_metric_overflow="true"` in
    /// Prometheus).
    Overflow,
}

/// What a new instrument is: the `metrics` name, its family and what was
/// described of it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct InstrumentSpec<'a> {
    /// The `metrics` name as recorded (the first of a family's names).
    pub name: &'a str,
    /// The Prometheus family it becomes ([`super::bridged_family_name`]).
    pub family: &'a str,
    /// Counter, gauge or histogram.
    pub kind: InstrumentKind,
    /// The UCUM unit described, if any.
    pub unit: Option<&'static str>,
    /// The description, `""` if none.
    pub help: &'a str,
    /// A histogram's upper bounds (the first matching bucket rule's);
    /// empty for the other kinds.
    pub bounds: &'a [f64],
}

/// A backend's storage for bridged instruments: about all a backend writes
/// to bridge the `metrics` crate. Called only on the registration path
/// (once per handle); handles record straight into the series made here.
///
/// ```
/// use std::sync::Arc;
/// use gym_metrics_api::backend::InstrumentKind;
/// use gym_metrics_kit::bridge::*;
///
/// /// Counters and gauges in atomics; histograms only counted.
/// struct Cells;
/// #[derive(Default)]
/// struct Counted(std::sync::atomic::AtomicU64);
/// impl metrics::HistogramFn for Counted {
///     fn record(&self, _: f64) {
///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///     }
/// }
/// impl Storage for Cells {
///     type Instrument = ();
///     type Counter = CounterCell;
///     type Gauge = GaugeCell;
///     type Histogram = Counted;
///     const LOG_TARGET: &'static str = "example";
///     const ONE_INSTRUMENT_PER_FAMILY: bool = true;
///     fn instrument(&self, _: &InstrumentSpec<'_>) {}
///     fn series(&self, _: &(), kind: InstrumentKind, _: SeriesLabels<'_>) -> Series<Self> {
///         match kind {
///             InstrumentKind::Counter => Series::Counter(Arc::new(CounterCell::new(()))),
///             InstrumentKind::Gauge => Series::Gauge(Arc::new(GaugeCell::new(()))),
///             InstrumentKind::Histogram => Series::Histogram(Arc::new(HistogramCell::new(Counted::default()))),
///         }
///     }
/// }
///
/// let registry = Arc::new(Instruments::new(MetricsBridgeOptions::new().cardinality_limit(1), Cells, []));
/// let bridge = MetricsBridgeRecorder::new(Arc::clone(&registry));
/// metrics::with_local_recorder(&bridge, || {
///     metrics::counter!("jobs.done", "queue" => "a").increment(2);
///     metrics::counter!("jobs.done", "queue" => "b").increment(1); // past the limit
///     metrics::gauge!("gym.servers.active").set(1.0); // a gym family's name
///     metrics::histogram!("wait").record(-1.0); // dropped: negative
/// });
/// let stats: MetricsBridgeStats = bridge.stats();
/// assert_eq!((stats.overflowed, stats.refused, stats.dropped), (1, 1, 1));
/// registry.with_instruments(|all| {
///     let jobs = all.next().expect("one instrument");
///     assert_eq!(jobs.family(), "jobs_done_total");
///     let Some(Series::Counter(a)) = jobs.series().values().next() else { panic!() };
///     assert_eq!(a.value(), 2);
///     let Some(Series::Counter(overflow)) = jobs.overflow() else { panic!() };
///     assert_eq!(overflow.value(), 1);
/// });
/// ```
pub trait Storage: Send + Sync + 'static {
    /// What the backend keeps of one instrument (an SDK instrument, or a
    /// family's HELP and bounds).
    type Instrument: Send + 'static;
    /// A counter series.
    type Counter: CounterFn + Send + Sync + 'static;
    /// A gauge series.
    type Gauge: GaugeFn + Send + Sync + 'static;
    /// A histogram series.
    type Histogram: HistogramFn + Send + Sync + 'static;

    /// The log target of the bridge's warnings (refused names, a reached
    /// cardinality limit).
    const LOG_TARGET: &'static str;

    /// Whether the `metrics` names that become one family share one
    /// instrument and its series (the Prometheus path writes the family
    /// itself), or each name is an instrument of its own (the OpenTelemetry
    /// path: the SDK instrument keeps the `metrics` name).
    const ONE_INSTRUMENT_PER_FAMILY: bool;

    /// Why `name` cannot be one of this backend's instruments, beyond the
    /// kit's name rule ([`super::FamilyNames`]); `None` (the default) if it can.
    fn name_problem(&self, name: &str) -> Option<&'static str> {
        let _ = name;
        None
    }

    /// The series labels of a `metrics` key's labels: by default as
    /// recorded, sorted by key.
    fn labels<'a>(
        &self,
        labels: impl Iterator<Item = (&'a str, &'a str)>,
        kind: InstrumentKind,
    ) -> Labels {
        let _ = kind;
        let mut labels: Labels = labels
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        labels.sort();
        labels
    }

    /// A new instrument.
    fn instrument(&self, spec: &InstrumentSpec<'_>) -> Self::Instrument;

    /// A new series of `instrument`, of its `kind`.
    fn series(
        &self,
        instrument: &Self::Instrument,
        kind: InstrumentKind,
        labels: SeriesLabels<'_>,
    ) -> Series<Self>;

    /// `help` was described for `name` after its instrument was made (by
    /// default nothing changes).
    fn described_late(&self, instrument: &mut Self::Instrument, name: &str, help: &str) {
        let _ = (instrument, name, help);
    }
}
