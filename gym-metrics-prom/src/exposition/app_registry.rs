//! An application's own `prometheus::Registry` served in our exposition
//! (feature `prometheus-registry`, [`crate::PrometheusBuilder::with_registry`]):
//! at each scrape `gather()` is called and every `MetricFamily` becomes a
//! family of the crate's one model (`model.rs`), written after ours in
//! the negotiated format by the same writers, so the same negotiation,
//! gzip, escaping, OpenMetrics framing and protobuf apply.
//!
//! Counters, gauges and histograms are served. A summary or an untyped
//! family (which the `prometheus` crate's own metrics never make; only a
//! hand-written collector can) is left out, logged once, as are sample
//! timestamps (a scrape's samples are of the scrape's instant). A family
//! whose sample names meet one of ours (`target_info`, `gym_*`,
//! `http_server_*`, `process_*` with process metrics, a bridged `metrics`
//! family) is refused: at build time with [`crate::BuildError::RegistryClash`],
//! and if registered later, left out of every scrape, logged once.
//!
//! A `prometheus-client` registry is not served: that crate has no
//! gathering API, only its own text encoder, so serving it would mean
//! either a second renderer beside ours or parsing its text back into the
//! model; its `encode` output can be served from the application's own
//! route instead.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus::proto::{MetricFamily, MetricType};

use std::borrow::Cow;

use super::gym::GymFamilies;
use super::model::{Buckets, Family, Histogram, Kind, Value};
use super::{Exposition, LaterFamilies, Out};
use crate::error::BuildError;
use gym_metrics_kit::naming::sample_names;

/// Left-out families logged one by one, at most this many names.
const LOGGED_AT_MOST: usize = 256;

/// The application's registry, and the sample names it must not write.
#[derive(Debug)]
pub(crate) struct AppRegistry {
    registry: prometheus::Registry,
    /// Every sample name of our families, by the family that writes it.
    ours: HashMap<String, String>,
    /// Sources written before this one (the `metrics` bridge), whose
    /// families come and go.
    earlier: Vec<Arc<dyn LaterFamilies>>,
    logged: Mutex<HashSet<String>>,
}

/// `exposition` with `registry`'s families written after everything else.
///
/// # Errors
/// [`BuildError::RegistryClash`] when a family registered now meets ours.
pub(crate) fn attach(
    registry: prometheus::Registry,
    families: &GymFamilies,
    exposition: Exposition,
) -> Result<Exposition, BuildError> {
    let mut ours = HashMap::new();
    for family in families.iter().map(|f| &f.family) {
        for sample in sample_names(&family.name, family.kind.instrument_kind()) {
            ours.insert(sample, family.name.clone());
        }
    }
    let app = AppRegistry {
        registry,
        ours,
        earlier: exposition.later().to_vec(),
        logged: Mutex::default(),
    };
    let taken = app.taken_by_earlier();
    for family in app.registry.gather() {
        if let Some(owner) = app.meets(family.name(), &kind_of(&family), &taken) {
            return Err(BuildError::RegistryClash {
                family: family.name().to_string(),
                ours: owner,
            });
        }
    }
    Ok(exposition.with_later(Arc::new(app)))
}

/// A family's kind, or why it is not served.
fn kind_of(family: &MetricFamily) -> Result<Kind, &'static str> {
    match family.get_field_type() {
        MetricType::COUNTER => Ok(Kind::Counter),
        MetricType::GAUGE => Ok(Kind::Gauge),
        MetricType::HISTOGRAM => Ok(Kind::Histogram),
        MetricType::SUMMARY => Err("a summary"),
        MetricType::UNTYPED => Err("untyped"),
    }
}

impl AppRegistry {
    /// The sample names the earlier sources write now.
    fn taken_by_earlier(&self) -> HashSet<String> {
        self.earlier.iter().flat_map(|s| s.taken_names()).collect()
    }

    /// The family of ours that `name` would meet, or the sample name of an
    /// earlier source's (in `taken`) that it would write too.
    fn meets(
        &self,
        name: &str,
        kind: &Result<Kind, &'static str>,
        taken: &HashSet<String>,
    ) -> Option<String> {
        let kind = (*kind).unwrap_or(Kind::Gauge);
        let samples = sample_names(name, kind.instrument_kind());
        if let Some(owner) = samples.iter().find_map(|s| self.ours.get(s)) {
            return Some(owner.clone());
        }
        samples.into_iter().find(|s| taken.contains(s))
    }

    fn log_once(&self, name: &str, why: &str) {
        let mut logged = self.logged.lock().unwrap_or_else(PoisonError::into_inner);
        if logged.len() < LOGGED_AT_MOST && logged.insert(name.to_string()) {
            log::warn!(
                "the application's prometheus::Registry family {name:?} is left out of /metrics: \
                 {why}; rename or drop it"
            );
        }
    }
}

impl LaterFamilies for AppRegistry {
    fn write(&self, out: &mut Out<'_>) {
        let taken = self.taken_by_earlier();
        for family in self.registry.gather() {
            let name = family.name();
            let kind = kind_of(&family);
            if let Some(owner) = self.meets(name, &kind, &taken) {
                self.log_once(name, &format!("it meets gym-metrics' family {owner}"));
                continue;
            }
            let kind = match kind {
                Ok(kind) => kind,
                Err(what) => {
                    self.log_once(
                        name,
                        &format!("it is {what}, which gym-metrics does not serve"),
                    );
                    continue;
                }
            };
            let (model, series) = convert(&family, kind);
            if series.len() < family.get_metric().len() {
                self.log_once(name, "its histograms do not share one bucket layout (only those of the first are served)");
            }
            if !series.is_empty() {
                let series = series.iter().map(|(labels, value)| {
                    let labels = labels.iter().map(|(n, v)| (n.as_str(), v.as_str()));
                    (labels, value.value())
                });
                out.family(&model, series);
            }
        }
    }
}

/// A series' labels, as gathered.
type Labels = Vec<(String, String)>;

/// A gathered series' value: a counter's or gauge's, or a histogram's
/// cumulative counts (the `+Inf` one, the count, last) and sum.
enum Gathered {
    Number(f64),
    Histogram(Vec<u64>, f64),
}

impl Gathered {
    fn value(&self) -> Value<'_> {
        match self {
            Gathered::Number(v) => Value::Float(*v),
            Gathered::Histogram(cumulative, sum) => {
                // The `prometheus` crate keeps classic buckets only.
                Value::Histogram(Histogram::classic(Buckets::Cumulative(cumulative), *sum))
            }
        }
    }
}

/// `family` as a family of the model and its series.
fn convert(family: &MetricFamily, kind: Kind) -> (Family, Vec<(Labels, Gathered)>) {
    let bounds: Vec<f64> = match kind {
        Kind::Histogram => family
            .get_metric()
            .first()
            .map(|m| bounds_of(m.get_histogram()))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let series = family
        .get_metric()
        .iter()
        .filter_map(|m| {
            let labels = m
                .get_label()
                .iter()
                .map(|l| (l.name().to_string(), l.value().to_string()))
                .collect();
            let value = match kind {
                Kind::Counter => Gathered::Number(m.get_counter().get_value()),
                Kind::Gauge => Gathered::Number(m.get_gauge().get_value()),
                Kind::Histogram => {
                    let h = m.get_histogram();
                    if bounds_of(h) != bounds {
                        return None;
                    }
                    let mut cumulative: Vec<u64> = h
                        .get_bucket()
                        .iter()
                        .filter(|b| b.upper_bound().is_finite())
                        .map(|b| b.cumulative_count())
                        .collect();
                    cumulative.push(h.get_sample_count());
                    Gathered::Histogram(cumulative, h.get_sample_sum())
                }
            };
            Some((labels, value))
        })
        .collect();
    let model = Family {
        name: family.name().to_string(),
        help: Cow::Owned(family.help().to_string()),
        kind,
        labels: Vec::new(),
        bounds,
    };
    (model, series)
}

/// A histogram's finite bucket bounds (`+Inf` is written from the count).
fn bounds_of(h: &prometheus::proto::Histogram) -> Vec<f64> {
    h.get_bucket()
        .iter()
        .map(|b| b.upper_bound())
        .filter(|b| b.is_finite())
        .collect()
}
