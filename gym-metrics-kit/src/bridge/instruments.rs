//! The bridged instruments, for both backends: which `metrics` names became
//! which instrument (or were refused, by the one name rule
//! [`FamilyNames`], the name length and the family limit), each
//! instrument's series by label set, the cardinality limit, the byte
//! budgets and the overflow series, the bucket rules. Registering is the
//! slow path, once per handle; a handle already registered is found in a
//! read-locked cache, and a handle records through its series with no
//! lookup at all.
//!
//! The limits are decided here, at registration: an instrument's first
//! `limit` non-empty label sets get series of their own (the empty label
//! set does not count, as in the OpenTelemetry SDK) while their labels and
//! the bytes of all series stay within the budgets
//! ([`MetricsBridgeOptions`]); every further one shares the instrument's
//! one overflow series. A registration into an overflow series already
//! decided (a label set seen past a limit before, or one whose labels alone
//! are over the budget of a series) is found under the same read lock as
//! the cache, without the registry's lock.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};

use gym_metrics_api::backend::InstrumentKind as Kind;
use metrics::{Key, Unit};

use super::storage::{InstrumentSpec, Labels, Series, SeriesLabels, Storage};
use super::{
    bridged_family_name, ucum_unit, FamilyNames, MetricsBridgeOptions, MetricsBridgeStats,
    NameRefused, MAX_HELP_BYTES, MAX_NAME_BYTES, SAMPLE_OVERHEAD_BYTES,
};

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
    /// The sample lines one series writes (a histogram's buckets, sum and count).
    samples: usize,
    /// Whether its reaching the cardinality limit was logged.
    limit_logged: bool,
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

    /// The histogram values its series dropped.
    fn dropped(&self) -> u64 {
        self.series
            .values()
            .chain(&self.overflow)
            .map(|series| match series {
                Series::Histogram(h) => h.dropped(),
                _ => 0,
            })
            .sum()
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

/// Names (and descriptions) remembered beyond the family limit: past it, a
/// name is resolved again at each registration of a handle.
const NAMES_REMEMBERED_BEYOND_FAMILIES: usize = 4096;

/// Keys remembered per kind as registered into an overflow series (each
/// within a series' label budget); past it the memory starts again.
const OVERFLOWED_KEYS_REMEMBERED: usize = 4096;

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
    /// The bytes the series made so far are counted for
    /// ([`MetricsBridgeOptions::bytes_limit`]).
    bytes: usize,
}

/// What registration finds without the registry's lock, by kind (ranked).
struct Fast<S: Storage> {
    /// Every handle registered so far whose series is within the limits.
    admitted: [HashMap<Key, Series<S>>; 3],
    /// Keys registered into an overflow series (bounded).
    overflowed: [HashMap<Key, Series<S>>; 3],
    /// Each `metrics` name's overflow series, once it has one.
    overflow_by_name: [HashMap<String, Series<S>>; 3],
}

impl<S: Storage> Default for Fast<S> {
    fn default() -> Self {
        Self {
            admitted: Default::default(),
            overflowed: Default::default(),
            overflow_by_name: Default::default(),
        }
    }
}

/// Why a label set goes to the overflow series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Past {
    Cardinality,
    SeriesLabelBytes,
    Bytes,
}

/// The bridge's state over a backend's [`Storage`], shared by the
/// [`MetricsBridgeRecorder`](super::MetricsBridgeRecorder) and whatever
/// reads the instruments (the Prometheus exposition). Example at [`Storage`].
pub struct Instruments<S: Storage> {
    options: MetricsBridgeOptions,
    storage: S,
    fast: RwLock<Fast<S>>,
    state: Mutex<State<S>>,
    overflowed: AtomicU64,
    refused: AtomicU64,
    /// Whether each budget's first breach was logged.
    label_bytes_logged: AtomicBool,
    bytes_logged: AtomicBool,
    families_logged: AtomicBool,
}

fn rank(kind: Kind) -> u8 {
    match kind {
        Kind::Counter => 0,
        Kind::Gauge => 1,
        Kind::Histogram => 2,
    }
}

/// The bytes of `key`'s labels, keys and values as recorded.
fn label_bytes(key: &Key) -> usize {
    key.labels().map(|l| l.key().len() + l.value().len()).sum()
}

/// `true` the first time only.
fn first(flag: &AtomicBool) -> bool {
    !flag.swap(true, Ordering::Relaxed)
}

impl<S: Storage> Instruments<S> {
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
            bytes: 0,
        };
        Self {
            options,
            storage,
            fast: RwLock::default(),
            state: Mutex::new(state),
            overflowed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            label_bytes_logged: AtomicBool::new(false),
            bytes_logged: AtomicBool::new(false),
            families_logged: AtomicBool::new(false),
        }
    }

    /// The backend's storage.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Runs `f` over the instruments in name order, the state locked
    /// (registration of a new handle waits; recording through handles, and
    /// registering one found in the cache, does not).
    pub fn with_instruments<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &Bridged<S>>) -> R,
    ) -> R {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut state.instruments.values())
    }

    /// What was refused, folded into an overflow series or dropped so far.
    pub fn stats(&self) -> MetricsBridgeStats {
        let dropped = self.with_instruments(|all| all.map(Bridged::dropped).sum());
        MetricsBridgeStats {
            overflowed: self.overflowed.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            dropped,
        }
    }

    /// How many names (and descriptions) are remembered.
    fn names_remembered(&self) -> usize {
        self.options
            .max_families()
            .saturating_mul(4)
            .saturating_add(NAMES_REMEMBERED_BEYOND_FAMILIES)
    }

    /// The series `key` records into, or `None` if its name is refused.
    pub(crate) fn register(&self, key: &Key, kind: Kind) -> Option<Series<S>> {
        let at = usize::from(rank(kind));
        {
            let fast = self.fast.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(series) = fast.admitted[at].get(key) {
                return Some(series.clone());
            }
            let overflow = fast.overflowed[at].get(key).or_else(|| {
                (label_bytes(key) > self.options.max_series_label_bytes())
                    .then(|| fast.overflow_by_name[at].get(key.name()))
                    .flatten()
            });
            if let Some(series) = overflow {
                self.overflowed.fetch_add(1, Ordering::Relaxed);
                return Some(series.clone());
            }
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *state;
        let id = self.resolve(state, key.name(), kind)?;
        let bridged = state.instruments.get_mut(&id)?;
        if label_bytes(key) > self.options.max_series_label_bytes() {
            let series = self.overflow(bridged, Past::SeriesLabelBytes);
            let mut fast = self.fast.write().unwrap_or_else(PoisonError::into_inner);
            let by_name = &mut fast.overflow_by_name[at];
            if by_name.len() < self.names_remembered() {
                by_name.insert(key.name().to_string(), series.clone());
            }
            return Some(series);
        }
        let labels = self
            .storage
            .labels(key.labels().map(|l| (l.key(), l.value())), kind);
        let series = match bridged.series.get(&labels) {
            Some(series) => series.clone(),
            None => {
                let cost = bridged.samples.saturating_mul(
                    bridged.family.len()
                        + labels.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
                        + SAMPLE_OVERHEAD_BYTES,
                );
                let past = if labels.is_empty() {
                    None
                } else if bridged.counted >= self.options.limit() {
                    Some(Past::Cardinality)
                } else if state.bytes.saturating_add(cost) > self.options.max_bytes() {
                    Some(Past::Bytes)
                } else {
                    None
                };
                if let Some(past) = past {
                    let series = self.overflow(bridged, past);
                    let mut fast = self.fast.write().unwrap_or_else(PoisonError::into_inner);
                    let overflowed = &mut fast.overflowed[at];
                    if overflowed.len() >= OVERFLOWED_KEYS_REMEMBERED {
                        overflowed.clear();
                    }
                    overflowed.insert(key.clone(), series.clone());
                    return Some(series);
                }
                state.bytes = state.bytes.saturating_add(cost);
                bridged.counted += usize::from(!labels.is_empty());
                let series =
                    self.storage
                        .series(&bridged.instrument, kind, SeriesLabels::Of(&labels));
                bridged.series.insert(labels, series.clone());
                series
            }
        };
        self.fast
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .admitted[at]
            .insert(key.clone(), series.clone());
        Some(series)
    }

    /// The overflow series of `bridged` (made on first use), for a label set
    /// `past` a limit: counted, and logged the first time for each cause
    /// (the cardinality limit once per instrument).
    fn overflow(&self, bridged: &mut Bridged<S>, past: Past) -> Series<S> {
        self.overflowed.fetch_add(1, Ordering::Relaxed);
        match past {
            Past::Cardinality if !bridged.limit_logged => {
                bridged.limit_logged = true;
                log::warn!(
                    target: S::LOG_TARGET,
                    "metrics instrument {} has reached its cardinality limit of {} label sets: \
                     further label sets are recorded into its series otel.metric.overflow=true \
                     (otel_metric_overflow=\"true\" in Prometheus); \
                     bound the label values (or raise MetricsBridgeOptions::cardinality_limit)",
                    bridged.family,
                    self.options.limit()
                );
            }
            Past::SeriesLabelBytes if first(&self.label_bytes_logged) => log::warn!(
                target: S::LOG_TARGET,
                "metrics instrument {} was given a label set of more than {} bytes: such label \
                 sets are recorded into the instrument's series otel.metric.overflow=true \
                 (otel_metric_overflow=\"true\" in Prometheus); labels name a series, they \
                 carry no payload (or raise MetricsBridgeOptions::series_label_bytes_limit); \
                 logged once",
                bridged.family,
                self.options.max_series_label_bytes()
            ),
            Past::Bytes if first(&self.bytes_logged) => log::warn!(
                target: S::LOG_TARGET,
                "the metrics bridge's series have reached their budget of {} bytes of \
                 exposition: further label sets (first of {}) are recorded into their \
                 instrument's series otel.metric.overflow=true (otel_metric_overflow=\"true\" in \
                 Prometheus); bound the label values (or raise MetricsBridgeOptions::bytes_limit); \
                 logged once",
                self.options.max_bytes(),
                bridged.family
            ),
            _ => {}
        }
        if let Some(series) = &bridged.overflow {
            return series.clone();
        }
        let series = self
            .storage
            .series(&bridged.instrument, bridged.kind, SeriesLabels::Overflow);
        bridged.overflow = Some(series.clone());
        series
    }

    /// The instrument the `metrics` name `name` of `kind` records into, made
    /// on first use with what was described; `None` when refused (logged
    /// once per name, once in all past the family limit).
    fn resolve(&self, state: &mut State<S>, name: &str, kind: Kind) -> Option<Id> {
        let at = (name.to_string(), kind);
        if let Some(resolved) = state.resolved.get(&at) {
            return resolved.clone();
        }
        let description = state.descriptions.get(&at).cloned().unwrap_or_default();
        let id_of = |family: &str| {
            let key = if S::ONE_INSTRUMENT_PER_FAMILY {
                family.to_string()
            } else {
                name.to_string()
            };
            (key, rank(kind))
        };
        let over_families = state.instruments.len() >= self.options.max_families()
            && bridged_family_name(name, description.unit, kind)
                .is_some_and(|family| !state.instruments.contains_key(&id_of(&family)));
        let claimed = if name.len() > MAX_NAME_BYTES {
            Err(NameRefused::new(
                truncated(name, 64),
                format!("a name has at most {MAX_NAME_BYTES} bytes"),
            ))
        } else if over_families {
            Err(NameRefused::new(
                name,
                format!(
                    "the bridge holds its limit of {} instruments \
                     (MetricsBridgeOptions::family_limit); further names are refused, \
                     logged once",
                    self.options.max_families()
                ),
            ))
        } else {
            match self.storage.name_problem(name) {
                Some(problem) => Err(NameRefused::new(name, problem)),
                None => state.names.claim(name, description.unit, kind),
            }
        };
        let resolved = match claimed {
            Err(refused) => {
                let log = !over_families || first(&self.families_logged);
                self.refuse(state, &refused, log);
                None
            }
            Ok(family) => {
                let id = id_of(&family);
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
                    let samples = match kind {
                        Kind::Histogram => bounds.len() + 3,
                        _ => 1,
                    };
                    let bridged = Bridged {
                        family,
                        kind,
                        instrument,
                        series: BTreeMap::new(),
                        overflow: None,
                        counted: 0,
                        samples,
                        limit_logged: false,
                    };
                    state.instruments.insert(id.clone(), bridged);
                }
                Some(id)
            }
        };
        if state.resolved.len() < self.names_remembered() {
            state.resolved.insert(at, resolved.clone());
        }
        resolved
    }

    fn refuse(&self, state: &mut State<S>, refused: &NameRefused, log: bool) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        if log
            && state.refusals_logged.len() < REFUSALS_LOGGED
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
                    self.storage.described_late(
                        &mut bridged.instrument,
                        name,
                        truncated(help, MAX_HELP_BYTES),
                    );
                }
            }
            Some(None) => {}
            None if state.descriptions.len() < self.names_remembered() => {
                let description = Description {
                    unit: unit.and_then(ucum_unit),
                    help: truncated(help, MAX_HELP_BYTES).to_string(),
                };
                state.descriptions.insert(at, description);
            }
            None => {}
        }
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn truncated(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl<S: Storage> fmt::Debug for Instruments<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sizes: BTreeMap<String, usize> =
            self.with_instruments(|all| all.map(|b| (b.family.clone(), b.series.len())).collect());
        f.debug_struct("Instruments")
            .field("options", &self.options)
            .field("series", &sizes)
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{mpsc, Arc};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::bridge::{CounterCell, GaugeCell, HistogramCell, MetricsBridgeRecorder};

    /// Counters and gauges in cells, histograms counted.
    struct Cells;

    #[derive(Default)]
    struct Counted(AtomicU64);

    impl metrics::HistogramFn for Counted {
        fn record(&self, _: f64) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl Storage for Cells {
        type Instrument = ();
        type Counter = CounterCell;
        type Gauge = GaugeCell;
        type Histogram = Counted;
        const LOG_TARGET: &'static str = "test";
        const ONE_INSTRUMENT_PER_FAMILY: bool = true;
        fn instrument(&self, _: &InstrumentSpec<'_>) {}
        fn series(&self, _: &(), kind: Kind, _: SeriesLabels<'_>) -> Series<Self> {
            match kind {
                Kind::Counter => Series::Counter(Arc::new(CounterCell::new(()))),
                Kind::Gauge => Series::Gauge(Arc::new(GaugeCell::new(()))),
                Kind::Histogram => {
                    Series::Histogram(Arc::new(HistogramCell::new(Counted::default())))
                }
            }
        }
    }

    fn registry(options: MetricsBridgeOptions) -> Arc<Instruments<Cells>> {
        Arc::new(Instruments::new(options, Cells, []))
    }

    fn overflow_total(registry: &Instruments<Cells>) -> u64 {
        registry.with_instruments(|all| match all.next().and_then(Bridged::overflow) {
            Some(Series::Counter(c)) => c.value(),
            _ => 0,
        })
    }

    #[test]
    fn a_label_set_past_a_limit_registers_without_the_instruments_lock() {
        let options = MetricsBridgeOptions::new()
            .cardinality_limit(1)
            .series_label_bytes_limit(100);
        let registry = registry(options);
        let bridge = MetricsBridgeRecorder::new(Arc::clone(&registry));
        metrics::with_local_recorder(&bridge, || {
            metrics::counter!("jobs", "q" => "a").increment(1);
            metrics::counter!("jobs", "q" => "b").increment(1); // past the limit
            metrics::counter!("jobs", "q" => "x".repeat(50_000)).increment(1); // too big
        });
        // The registry's lock held, as a scrape holds it while rendering.
        let (done, finished) = mpsc::channel();
        let recording = {
            let bridge = bridge.clone();
            std::thread::spawn(move || {
                metrics::with_local_recorder(&bridge, || {
                    metrics::counter!("jobs", "q" => "b").increment(1);
                    metrics::counter!("jobs", "q" => "y".repeat(50_000)).increment(1);
                });
                let _ = done.send(());
            })
        };
        let waited = registry.with_instruments(|_| finished.recv_timeout(Duration::from_secs(5)));
        recording.join().unwrap();
        assert!(
            waited.is_ok(),
            "the registration waited for the registry's lock"
        );
        assert_eq!(overflow_total(&registry), 4);
        assert_eq!(registry.stats().overflowed, 4);

        // What registering it again costs (the key made once, as a handle
        // held by a `metrics` macro's caller is).
        let key = Key::from_parts("jobs", vec![metrics::Label::new("q", "z".repeat(50_000))]);
        let metadata = metrics::Metadata::new("test", metrics::Level::INFO, None);
        let started = Instant::now();
        for _ in 0..1_000 {
            metrics::Recorder::register_counter(&bridge, &key, &metadata).increment(1);
        }
        eprintln!(
            "a record into an overflowed 50 kB label set: {:?}",
            started.elapsed() / 1_000
        );
        assert_eq!(overflow_total(&registry), 1_004);
    }

    #[test]
    fn the_byte_budget_folds_new_label_sets_and_names_past_the_family_limit_are_refused() {
        // A series of "c" + "k=vv" costs 1 + 3 + 64 = 68 bytes: two fit in 150.
        let options = MetricsBridgeOptions::new().bytes_limit(150).family_limit(2);
        let registry = registry(options);
        let bridge = MetricsBridgeRecorder::new(Arc::clone(&registry));
        metrics::with_local_recorder(&bridge, || {
            for v in ["aa", "bb", "cc", "dd"] {
                metrics::gauge!("c", "k" => v).set(1.0);
            }
            metrics::gauge!("c").set(1.0); // no labels: always its own series
            metrics::gauge!("d").set(1.0);
            metrics::gauge!("e").set(1.0); // a third instrument
            metrics::gauge!("n".repeat(256)).set(1.0); // too long a name
            metrics::histogram!("c").record(-1.0); // refused: c is a gauge
            metrics::histogram!("d.h").record(1.0); // refused: a third instrument
        });
        let sizes: Vec<(String, usize, bool)> = registry.with_instruments(|all| {
            all.map(|b| {
                (
                    b.family().to_string(),
                    b.series().len(),
                    b.overflow().is_some(),
                )
            })
            .collect()
        });
        assert_eq!(
            sizes,
            [("c".to_string(), 3, true), ("d".to_string(), 1, false)]
        );
        let stats = registry.stats();
        assert_eq!((stats.overflowed, stats.refused), (2, 4));
    }
}
