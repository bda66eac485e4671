//! The bridged instruments, for both backends: which `metrics` names became
//! which instrument (or were refused, by the one name rule
//! [`FamilyNames`]), each instrument's series by label set, the cardinality
//! limit and its overflow series, the bucket rules. Registering is the slow
//! path, once per handle; a handle already registered is found in a
//! read-locked cache, and a handle records through its series with no
//! lookup at all.
//!
//! The cardinality limit is decided here, at registration: an instrument's
//! first `limit` non-empty label sets get series of their own (the empty
//! label set does not count, as in the OpenTelemetry SDK), every further one
//! shares the instrument's one overflow series.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};

use gym_metrics_api::backend::InstrumentKind as Kind;
use metrics::{Key, Unit};

use super::storage::{InstrumentSpec, Labels, Series, SeriesLabels, Storage};
use super::{ucum_unit, FamilyNames, MetricsBridgeOptions, MetricsBridgeStats, NameRefused};

/// One bridged instrument: its family, kind, the backend's instrument and
/// its series.
pub struct Bridged<S: Storage> {
    family: String,
    kind: Kind,
    instrument: S::Instrument,
    series: BTreeMap<Labels, Series<S>>,
    overflow: Option<Series<S>>,
    /// Series that count towards the limit (not the empty label set).
    counted: usize,
}

impl<S: Storage> Bridged<S> {
    /// The Prometheus family it becomes (example at [`Storage`]).
    pub fn family(&self) -> &str {
        &self.family
    }

    /// Counter, gauge or histogram.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The backend's instrument.
    pub fn instrument(&self) -> &S::Instrument {
        &self.instrument
    }

    /// The series within the limit, by label set (sorted).
    pub fn series(&self) -> &BTreeMap<Labels, Series<S>> {
        &self.series
    }

    /// The overflow series, once a label set past the limit was registered.
    pub fn overflow(&self) -> Option<&Series<S>> {
        self.overflow.as_ref()
    }
}

/// What a `metrics` description says.
#[derive(Debug, Clone, Default)]
struct Description {
    unit: Option<&'static str>,
    help: String,
}

/// Refusals logged one by one, at most this many names (then silently counted).
const REFUSALS_LOGGED: usize = 256;

/// An instrument's key: its family or `metrics` name
/// ([`Storage::ONE_INSTRUMENT_PER_FAMILY`]), and its kind (ranked, so that
/// instruments are in name order).
type Id = (String, u8);

struct State<S: Storage> {
    /// The families taken, gym and bridged: the one name rule.
    names: FamilyNames,
    /// What each `metrics` name of each kind became: an instrument, or refused.
    resolved: HashMap<(String, Kind), Option<Id>>,
    instruments: BTreeMap<Id, Bridged<S>>,
    descriptions: HashMap<(String, Kind), Description>,
    refusals_logged: HashSet<String>,
}

/// The bridge's state over a backend's [`Storage`], shared by the
/// [`MetricsBridgeRecorder`](super::MetricsBridgeRecorder) and whatever
/// reads the instruments (the Prometheus exposition). Example at [`Storage`].
pub struct Registry<S: Storage> {
    options: MetricsBridgeOptions,
    storage: S,
    /// Every handle registered so far whose series is within the limit.
    cache: RwLock<HashMap<(Key, Kind), Series<S>>>,
    state: Mutex<State<S>>,
    overflowed: AtomicU64,
    refused: AtomicU64,
}

fn rank(kind: Kind) -> u8 {
    match kind {
        Kind::Counter => 0,
        Kind::Gauge => 1,
        Kind::Histogram => 2,
    }
}

impl<S: Storage> Registry<S> {
    /// An empty bridge into `storage`, beside the gym families
    /// ([`FamilyNames::new`]) and the families `taken` (others the backend
    /// writes): no bridged family may write a sample name of theirs.
    pub fn new<'a>(
        options: MetricsBridgeOptions,
        storage: S,
        taken: impl IntoIterator<Item = (&'a str, Kind)>,
    ) -> Self {
        let mut names = FamilyNames::new();
        for (family, kind) in taken {
            names.take(family, kind);
        }
        let state = State {
            names,
            resolved: HashMap::new(),
            instruments: BTreeMap::new(),
            descriptions: HashMap::new(),
            refusals_logged: HashSet::new(),
        };
        Self {
            options,
            storage,
            cache: RwLock::default(),
            state: Mutex::new(state),
            overflowed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// The backend's storage.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Runs `f` over the instruments in name order, the state locked
    /// (registration waits; recording through handles does not).
    pub fn with_instruments<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &Bridged<S>>) -> R,
    ) -> R {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut state.instruments.values())
    }

    /// What was refused or folded into an overflow series so far.
    pub fn stats(&self) -> MetricsBridgeStats {
        MetricsBridgeStats {
            overflowed: self.overflowed.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }

    /// The series `key` records into, or `None` if its name is refused.
    pub(crate) fn register(&self, key: &Key, kind: Kind) -> Option<Series<S>> {
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
        let id = self.resolve(state, key.name(), kind)?;
        let bridged = state.instruments.get_mut(&id)?;
        let labels = self
            .storage
            .labels(key.labels().map(|l| (l.key(), l.value())), kind);
        let series = match bridged.series.get(&labels) {
            Some(series) => series.clone(),
            None if labels.is_empty() || bridged.counted < self.options.limit() => {
                bridged.counted += usize::from(!labels.is_empty());
                let series =
                    self.storage
                        .series(&bridged.instrument, kind, SeriesLabels::Of(&labels));
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
    fn overflow(&self, bridged: &mut Bridged<S>) -> Series<S> {
        self.overflowed.fetch_add(1, Ordering::Relaxed);
        if let Some(series) = &bridged.overflow {
            return series.clone();
        }
        log::warn!(
            target: S::LOG_TARGET,
            "metrics instrument {} has reached its cardinality limit of {} label sets: \
             further label sets are recorded into its series otel.metric.overflow=true \
             (otel_metric_overflow=\"true\" in Prometheus); \
             bound the label values (or raise MetricsBridgeOptions::cardinality_limit)",
            bridged.family,
            self.options.limit()
        );
        let series = self
            .storage
            .series(&bridged.instrument, bridged.kind, SeriesLabels::Overflow);
        bridged.overflow = Some(series.clone());
        series
    }

    /// The instrument the `metrics` name `name` of `kind` records into, made
    /// on first use with what was described; `None` when refused (logged
    /// once per name).
    fn resolve(&self, state: &mut State<S>, name: &str, kind: Kind) -> Option<Id> {
        let at = (name.to_string(), kind);
        if let Some(resolved) = state.resolved.get(&at) {
            return resolved.clone();
        }
        let description = state.descriptions.get(&at).cloned().unwrap_or_default();
        let claimed = match self.storage.name_problem(name) {
            Some(problem) => Err(NameRefused::new(name, problem)),
            None => state.names.claim(name, description.unit, kind),
        };
        let resolved = match claimed {
            Err(refused) => {
                self.refuse(state, &refused);
                None
            }
            Ok(family) => {
                let key = if S::ONE_INSTRUMENT_PER_FAMILY {
                    family.clone()
                } else {
                    name.to_string()
                };
                let id = (key, rank(kind));
                if !state.instruments.contains_key(&id) {
                    let bounds = match kind {
                        Kind::Histogram => self.options.buckets_for(name).into(),
                        _ => Vec::new(),
                    };
                    let spec = InstrumentSpec {
                        name,
                        family: &family,
                        kind,
                        unit: description.unit,
                        help: &description.help,
                        bounds: &bounds,
                    };
                    let instrument = self.storage.instrument(&spec);
                    let bridged = Bridged {
                        family,
                        kind,
                        instrument,
                        series: BTreeMap::new(),
                        overflow: None,
                        counted: 0,
                    };
                    state.instruments.insert(id.clone(), bridged);
                }
                Some(id)
            }
        };
        state.resolved.insert(at, resolved.clone());
        resolved
    }

    fn refuse(&self, state: &mut State<S>, refused: &NameRefused) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        if state.refusals_logged.len() < REFUSALS_LOGGED
            && state.refusals_logged.insert(refused.name().to_string())
        {
            log::warn!(target: S::LOG_TARGET, "{refused}");
        }
    }

    /// Records a `describe_*`: the unit (part of the family name) and the
    /// description count if they come before the name's first use; after
    /// it, the storage is told ([`Storage::described_late`]).
    pub(crate) fn describe(&self, name: &str, kind: Kind, unit: Option<Unit>, help: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *state;
        let at = (name.to_string(), kind);
        match state.resolved.get(&at) {
            Some(Some(id)) => {
                if let Some(bridged) = state.instruments.get_mut(id) {
                    self.storage
                        .described_late(&mut bridged.instrument, name, help);
                }
            }
            Some(None) => {}
            None => {
                let description = Description {
                    unit: unit.and_then(ucum_unit),
                    help: help.to_string(),
                };
                state.descriptions.insert(at, description);
            }
        }
    }
}

impl<S: Storage> fmt::Debug for Registry<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sizes: BTreeMap<String, usize> =
            self.with_instruments(|all| all.map(|b| (b.family.clone(), b.series.len())).collect());
        f.debug_struct("Registry")
            .field("options", &self.options)
            .field("series", &sizes)
            .field("stats", &self.stats())
            .finish()
    }
}
