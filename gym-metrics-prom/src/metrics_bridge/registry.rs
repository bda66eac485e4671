//! The bridged families: which `metrics` names became which family (or were
//! refused), each family's series by label set, the cardinality limit and
//! its overflow series. Registering is the slow path, once per handle; a
//! handle already registered is found in a read-locked cache, and a handle
//! records into its series' atomics with no lookup at all.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use gym_metrics_api::backend::InstrumentKind;
use gym_metrics_kit::bridge::{ucum_unit, FamilyNames, MetricsBridgeOptions, NameRefused};
use metrics::{Key, KeyName, SharedString, Unit};

use super::naming::series_labels;
use super::series::{CounterSeries, GaugeSeries, HistogramSeries};
use crate::exposition::model::Kind;

/// One series of any kind, as a handle holds it.
#[derive(Clone, Debug)]
pub(crate) enum AnySeries {
    Counter(Arc<CounterSeries>),
    Gauge(Arc<GaugeSeries>),
    Histogram(Arc<HistogramSeries>),
}

impl AnySeries {
    fn new(kind: Kind, bounds: &[f64]) -> Self {
        match kind {
            Kind::Counter => AnySeries::Counter(Arc::default()),
            Kind::Gauge => AnySeries::Gauge(Arc::default()),
            Kind::Histogram => AnySeries::Histogram(Arc::new(HistogramSeries::new(bounds))),
        }
    }
}

/// A series' labels: translated, sorted by name.
pub(crate) type Labels = Vec<(String, String)>;

/// One bridged family.
#[derive(Debug)]
pub(crate) struct BridgedFamily {
    pub(crate) kind: Kind,
    pub(crate) help: String,
    pub(crate) bounds: Vec<f64>,
    pub(crate) series: BTreeMap<Labels, AnySeries>,
    /// The one series every label set past the limit records into.
    pub(crate) overflow: Option<AnySeries>,
    /// Series that count towards the limit (the empty label set does not,
    /// as in the OpenTelemetry SDK).
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

#[derive(Debug, Default)]
struct State {
    /// Bridged families by name, in name order (the exposition's).
    families: BTreeMap<String, BridgedFamily>,
    /// The families taken, gym and bridged: the API's one name rule.
    names: FamilyNames,
    /// What each `metrics` name of each kind became: a family, or refused.
    resolved: HashMap<(String, Kind), Option<String>>,
    descriptions: HashMap<(String, Kind), Description>,
    refusals_logged: HashSet<String>,
}

/// Every handle registered so far whose series is within the limit.
#[derive(Debug, Default)]
struct Cache(HashMap<(Key, Kind), AnySeries>);

/// The bridge's state (shared by the recorder and the exposition).
#[derive(Debug)]
pub(crate) struct Registry {
    options: MetricsBridgeOptions,
    cache: RwLock<Cache>,
    state: Mutex<State>,
    overflowed: AtomicU64,
    refused: AtomicU64,
}

impl Registry {
    /// An empty bridge beside the gym families (every one of the fleet's,
    /// whatever this process's role: [`FamilyNames::new`]): no bridged
    /// family may write a sample name of theirs.
    pub(crate) fn new<'a>(
        options: MetricsBridgeOptions,
        ours: impl IntoIterator<Item = (&'a str, InstrumentKind)>,
    ) -> Self {
        let mut state = State::default();
        for (family, kind) in ours {
            state.names.take(family, kind);
        }
        Self {
            options,
            cache: RwLock::default(),
            state: Mutex::new(state),
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
            .0
            .get(&cache_key)
        {
            return Some(series.clone());
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let family_name = self.resolve(&mut state, key.name(), kind)?;
        let family = state.families.get_mut(&family_name)?;
        let labels = series_labels(key.labels().map(|l| (l.key(), l.value())), kind);
        if let Some(series) = family.series.get(&labels) {
            let series = series.clone();
            self.cache_insert(cache_key, series.clone());
            return Some(series);
        }
        if labels.is_empty() || family.counted < self.options.limit() {
            family.counted += usize::from(!labels.is_empty());
            let series = AnySeries::new(kind, &family.bounds);
            family.series.insert(labels, series.clone());
            self.cache_insert(cache_key, series.clone());
            return Some(series);
        }
        self.overflowed.fetch_add(1, Ordering::Relaxed);
        if family.overflow.is_none() {
            log::warn!(
                "metrics instrument {family_name} has reached its cardinality limit of {} label sets: \
                 further label sets are recorded into its series otel_metric_overflow=\"true\"; \
                 bound the label values (or raise MetricsBridgeOptions::cardinality_limit)",
                self.options.limit()
            );
        }
        let bounds = family.bounds.clone();
        Some(
            family
                .overflow
                .get_or_insert_with(|| AnySeries::new(kind, &bounds))
                .clone(),
        )
    }

    fn cache_insert(&self, key: (Key, Kind), series: AnySeries) {
        self.cache
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .insert(key, series);
    }

    /// The family the `metrics` name `name` of `kind` records into, made on
    /// first use; `None` when refused (logged once per name).
    fn resolve(&self, state: &mut State, name: &str, kind: Kind) -> Option<String> {
        let id = (name.to_string(), kind);
        if let Some(resolved) = state.resolved.get(&id) {
            return resolved.clone();
        }
        let description = state.descriptions.get(&id).cloned().unwrap_or_default();
        let resolved = match state
            .names
            .claim(name, description.unit, kind.instrument_kind())
        {
            Err(refused) => self.refuse(state, refused),
            Ok(family) => {
                if !state.families.contains_key(&family) {
                    self.create(state, name, &family, kind, description);
                }
                Some(family)
            }
        };
        state.resolved.insert(id, resolved.clone());
        resolved
    }

    /// A new (claimed) family `family` for the `metrics` name `name`.
    fn create(
        &self,
        state: &mut State,
        name: &str,
        family: &str,
        kind: Kind,
        description: Description,
    ) {
        let bounds = match kind {
            Kind::Histogram => self.options.buckets_for(name).into(),
            _ => Vec::new(),
        };
        state.families.insert(
            family.to_string(),
            BridgedFamily {
                kind,
                help: description.help,
                bounds,
                series: BTreeMap::new(),
                overflow: None,
                counted: 0,
            },
        );
    }

    fn refuse(&self, state: &mut State, refused: NameRefused) -> Option<String> {
        self.refused.fetch_add(1, Ordering::Relaxed);
        if state.refusals_logged.len() < REFUSALS_LOGGED
            && state.refusals_logged.insert(refused.name().to_string())
        {
            log::warn!("{refused}");
        }
        None
    }

    /// Records a `describe_*`: the unit (part of the family name) counts if
    /// it comes before the name's first use; the description becomes the
    /// family's HELP unless it has one already.
    pub(crate) fn describe(
        &self,
        name: &KeyName,
        kind: Kind,
        unit: Option<Unit>,
        help: &SharedString,
    ) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let id = (name.as_str().to_string(), kind);
        if let Some(Some(family)) = state.resolved.get(&id).cloned() {
            if let Some(f) = state.families.get_mut(&family) {
                if f.help.is_empty() {
                    f.help = help.to_string();
                }
            }
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

    /// Runs `f` over the bridged families in name order, the state locked
    /// (registration waits; recording through handles does not).
    pub(crate) fn with_families<R>(
        &self,
        f: impl FnOnce(&BTreeMap<String, BridgedFamily>) -> R,
    ) -> R {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&state.families)
    }

    /// Registrations recorded into an overflow series so far.
    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Registrations refused so far (a name that clashes or is empty).
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}
