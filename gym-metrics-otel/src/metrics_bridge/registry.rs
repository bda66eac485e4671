//! The bridged instruments: which `metrics` names became which SDK
//! instrument (or were refused), each instrument's series by label set, the
//! cardinality limit and its overflow series. Registering is the slow path,
//! once per handle; a handle already registered is found in a read-locked
//! cache, and a handle records through its series with no lookup of ours.
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
//!   [`MetricsBridgeOptions`] rule's for the name (the instrument builder's
//!   `with_boundaries`), the same buckets as on the Prometheus path.
//!
//! The cardinality limit is decided here, at registration, as on the
//! Prometheus path: an instrument's first `limit` non-empty label sets get
//! series of their own, every further one shares the series whose only
//! attribute is `otel.metric.overflow=true`. That is the attribute set the
//! SDK's own cardinality limit (opentelemetry_sdk 0.33) uses for its overflow
//! series, but the SDK decides at measurement time, silently as far as we are
//! concerned (no count, no log of ours), so it cannot give
//! [`super::MetricsBridgeStats::overflowed`]; the SDK's limit for the scope
//! `metrics` is set one above ours (our overflow series is one of its
//! series) by a view ([`super::cardinality_view`]), and so never folds a
//! series before we do.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use gym_metrics_api::backend::InstrumentKind as Kind;
use gym_metrics_kit::bridge::{ucum_unit, FamilyNames, MetricsBridgeOptions, NameRefused};
use metrics::{Key, KeyName, SharedString, Unit};
use opentelemetry::metrics::{Counter, Histogram, Meter, ObservableGauge};
use opentelemetry::KeyValue;

use super::instrument_name::otel_name_problem;
use super::series::{CounterSeries, GaugeSeries, HistogramSeries};
use crate::export_log::LOG_TARGET;

/// The attribute of the one series an instrument's label sets past the
/// cardinality limit record into (the SDK's and the specification's).
pub(crate) const OVERFLOW_ATTRIBUTE: &str = "otel.metric.overflow";

/// One series of any kind, as a handle holds it.
#[derive(Clone, Debug)]
pub(crate) enum AnySeries {
    Counter(Arc<CounterSeries>),
    Gauge(Arc<GaugeSeries>),
    Histogram(Arc<HistogramSeries>),
}

/// The series of a gauge its callback reports.
type GaugeSet = Arc<RwLock<Vec<Arc<GaugeSeries>>>>;

/// The SDK instrument of one bridged `metrics` name.
enum SdkInstrument {
    Counter(Counter<u64>),
    Gauge {
        series: GaugeSet,
        /// Kept so that the callback stays the instrument's for the bridge's life.
        _instrument: ObservableGauge<f64>,
    },
    Histogram(Histogram<f64>),
}

impl SdkInstrument {
    fn series(&self, attributes: Vec<KeyValue>) -> AnySeries {
        match self {
            SdkInstrument::Counter(c) => {
                AnySeries::Counter(Arc::new(CounterSeries::new(c.clone(), attributes)))
            }
            SdkInstrument::Gauge { series, .. } => {
                let one = Arc::new(GaugeSeries::new(attributes));
                series
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Arc::clone(&one));
                AnySeries::Gauge(one)
            }
            SdkInstrument::Histogram(h) => {
                AnySeries::Histogram(Arc::new(HistogramSeries::new(h.clone(), attributes)))
            }
        }
    }
}

/// A series' labels, sorted by key (the identity of a series).
type Labels = Vec<(String, String)>;

/// One bridged instrument.
struct Bridged {
    /// The Prometheus family it becomes (for the overflow log).
    family: String,
    sdk: SdkInstrument,
    series: HashMap<Labels, AnySeries>,
    /// The one series every label set past the limit records into.
    overflow: Option<AnySeries>,
    /// Series that count towards the limit (the empty label set does not,
    /// as in the OpenTelemetry SDK and on the Prometheus path).
    counted: usize,
}

/// What a `metrics` description says.
#[derive(Debug, Clone, Default)]
struct Description {
    unit: Option<&'static str>,
    help: String,
}

/// Refusals logged one by one, at most this many names (then silently counted).
const REFUSALS_LOGGED: usize = 256;

#[derive(Default)]
struct State {
    /// The families taken, gym and bridged: the API's one name rule.
    names: FamilyNames,
    /// What each `metrics` name of each kind became: an instrument, or refused.
    instruments: HashMap<(String, Kind), Option<Bridged>>,
    descriptions: HashMap<(String, Kind), Description>,
    refusals_logged: HashSet<String>,
}

/// The bridge's state.
pub(crate) struct Registry {
    options: MetricsBridgeOptions,
    /// The meter of the scope `metrics`, on the backend's meter provider.
    meter: Meter,
    /// Every handle registered so far, by key and kind.
    cache: RwLock<HashMap<(Key, Kind), AnySeries>>,
    state: Mutex<State>,
    overflowed: AtomicU64,
    refused: AtomicU64,
}

impl Registry {
    /// An empty bridge creating its instruments on `meter`.
    pub(crate) fn new(options: MetricsBridgeOptions, meter: Meter) -> Self {
        Self {
            options,
            meter,
            cache: RwLock::default(),
            state: Mutex::default(),
            overflowed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// The series `key` records into, or `None` if its name is refused.
    pub(crate) fn register(&self, key: &Key, kind: Kind) -> Option<AnySeries> {
        let cache_key = (key.clone(), kind);
        if let Some(series) = self
            .cache
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&cache_key)
        {
            return Some(series.clone());
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *state;
        let id = (key.name().to_string(), kind);
        if !state.instruments.contains_key(&id) {
            let bridged = self.create(state, key.name(), kind);
            state.instruments.insert(id.clone(), bridged);
        }
        let bridged = state.instruments.get_mut(&id)?.as_mut()?;
        let mut labels: Labels = key
            .labels()
            .map(|l| (l.key().to_string(), l.value().to_string()))
            .collect();
        labels.sort();
        let series = match bridged.series.get(&labels) {
            Some(series) => series.clone(),
            None if labels.is_empty() || bridged.counted < self.options.limit() => {
                bridged.counted += usize::from(!labels.is_empty());
                let attributes = labels
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                    .collect();
                let series = bridged.sdk.series(attributes);
                bridged.series.insert(labels, series.clone());
                series
            }
            None => return Some(self.overflow(bridged)),
        };
        self.cache
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(cache_key, series.clone());
        Some(series)
    }

    /// The overflow series of `bridged` (made, and logged, on first use).
    fn overflow(&self, bridged: &mut Bridged) -> AnySeries {
        self.overflowed.fetch_add(1, Ordering::Relaxed);
        if let Some(series) = &bridged.overflow {
            return series.clone();
        }
        log::warn!(
            target: LOG_TARGET,
            "metrics instrument {} has reached its cardinality limit of {} label sets: \
             further label sets are recorded into its series {OVERFLOW_ATTRIBUTE}=true \
             (otel_metric_overflow=\"true\" in Prometheus); \
             bound the label values (or raise MetricsBridgeOptions::cardinality_limit)",
            bridged.family,
            self.options.limit()
        );
        let series = bridged
            .sdk
            .series(vec![KeyValue::new(OVERFLOW_ATTRIBUTE, true)]);
        bridged.overflow = Some(series.clone());
        series
    }

    /// The SDK instrument for the `metrics` name `name` of `kind`, with the
    /// unit and description described before; `None` when refused (logged
    /// once per name).
    fn create(&self, state: &mut State, name: &str, kind: Kind) -> Option<Bridged> {
        let description = state
            .descriptions
            .get(&(name.to_string(), kind))
            .cloned()
            .unwrap_or_default();
        let claimed = match otel_name_problem(name) {
            Some(problem) => Err(NameRefused::new(name, problem)),
            None => state.names.claim(name, description.unit, kind),
        };
        let family = match claimed {
            Ok(family) => family,
            Err(refused) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                if state.refusals_logged.len() < REFUSALS_LOGGED
                    && state.refusals_logged.insert(name.to_string())
                {
                    log::warn!(target: LOG_TARGET, "{refused}");
                }
                return None;
            }
        };
        let name = name.to_string();
        let help = description.help;
        let unit = description.unit.unwrap_or_default();
        let sdk = match kind {
            Kind::Counter => SdkInstrument::Counter(
                self.meter
                    .u64_counter(name)
                    .with_description(help)
                    .with_unit(unit)
                    .build(),
            ),
            Kind::Gauge => {
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
            Kind::Histogram => {
                let bounds: Vec<f64> = self.options.buckets_for(&name).into();
                SdkInstrument::Histogram(
                    self.meter
                        .f64_histogram(name)
                        .with_description(help)
                        .with_unit(unit)
                        .with_boundaries(bounds)
                        .build(),
                )
            }
        };
        Some(Bridged {
            family,
            sdk,
            series: HashMap::new(),
            overflow: None,
            counted: 0,
        })
    }

    /// Records a `describe_*`. SDK instruments are made at a name's first
    /// registration, with the unit and description described so far; a
    /// description of a name already registered changes nothing (logged
    /// at debug level): describe at start-up, before the first record.
    pub(crate) fn describe(
        &self,
        name: &KeyName,
        kind: Kind,
        unit: Option<Unit>,
        help: &SharedString,
    ) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let id = (name.as_str().to_string(), kind);
        if state.instruments.contains_key(&id) {
            log::debug!(
                target: LOG_TARGET,
                "metrics instrument {:?} was described after its first use: its OpenTelemetry \
                 instrument keeps the unit and description it was made with",
                name.as_str()
            );
            return;
        }
        state.descriptions.insert(
            id,
            Description {
                unit: unit.and_then(ucum_unit),
                help: help.to_string(),
            },
        );
    }

    /// Registrations recorded into an overflow series so far.
    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Registrations refused so far.
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// How many series each bridged instrument holds (for `Debug`).
    fn sizes(&self) -> BTreeMap<String, usize> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .instruments
            .iter()
            .filter_map(|((name, _), b)| Some((name.clone(), b.as_ref()?.series.len())))
            .collect()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("options", &self.options)
            .field("series", &self.sizes())
            .field("overflowed", &self.overflowed())
            .field("refused", &self.refused())
            .finish()
    }
}
