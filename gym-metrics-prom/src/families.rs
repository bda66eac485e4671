//! The one model of the exposition's families, built once from the metrics
//! and the resource: each family's name, HELP, TYPE, constant labels, bucket
//! bounds and where its value comes from. The text writer
//! (`exposition.rs`) and the `prometheus` crate collector (`collector.rs`)
//! are both produced from it, and [`Family::sample`] is the one place that
//! says what a family shows in a scrape, or that it is absent.
//!
//! Families appear as the OpenTelemetry backend's instruments produce them:
//! the histograms and `gym_servers_active` from their first record (the
//! fleet gauge only for a role that has one), the verify counters from the
//! start (at 0), the success rate from the first verification (never NaN);
//! `target_info` is always there. Names are those OpenTelemetry's exporter
//! gives, with the unit folded in (`_milliseconds`, `_seconds`): neither
//! format carries a UNIT line, as that exporter writes none. Families are in
//! name order, as the `prometheus` registry's `gather` sorts them.

use std::borrow::Cow;
use std::sync::Arc;

use gym_metrics_api::backend::{Boundaries, Instrument, InstrumentKind};
use gym_metrics_kit::naming::prometheus_name;
use gym_metrics_kit::naming::TARGET_INFO_FAMILY;

use crate::gym_metrics::GymMetrics;
use crate::process_families::{ProcessFamily, ProcessValue, PROCESS_FAMILIES};
use crate::readings::{HttpSeries, Readings};
use crate::resource::Resource;
use crate::scope::{SCOPE_NAME, SCOPE_VERSION};
use crate::sharded_histogram::HistogramSnapshot;

const TARGET_INFO_HELP: &str = "Target metadata";

/// The scope labels every gym series carries, first name then version.
const SCOPE_LABELS: [(&str, &str); 2] = [
    ("otel_scope_name", SCOPE_NAME),
    ("otel_scope_version", SCOPE_VERSION),
];

/// The TYPE of a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    /// The catalogue's kind of the same name (the `metrics` bridge's name
    /// rule is the API's, in its terms).
    #[cfg_attr(not(feature = "metrics-bridge"), allow(dead_code))]
    pub(crate) fn instrument_kind(self) -> InstrumentKind {
        match self {
            Kind::Counter => InstrumentKind::Counter,
            Kind::Gauge => InstrumentKind::Gauge,
            Kind::Histogram => InstrumentKind::Histogram,
        }
    }

    /// The word on the `# TYPE` line.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// How a family's samples are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One sample: `name{labels} value`.
    Single,
    /// One histogram series: a `_bucket` per bound and `+Inf`, `_sum`, `_count`.
    Histogram,
    /// Histogram series, one per attribute tuple; a series' attribute labels
    /// come before the family's own labels.
    HistogramSeries,
    /// Counter or gauge series, one per label set (a family known only at
    /// scrape time: an application registry's).
    ValueSeries,
}

/// Where a family's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// Always 1 (`target_info`).
    One,
    Rollouts,
    Verifications,
    SuccessRate,
    Completed,
    Succeeded,
    ServersActive,
    HttpServer,
    /// A value of this process's own (`process_families.rs`).
    Process(ProcessValue),
    /// Series handed over with the family at scrape time
    /// ([`Sample::Gathered`]): an application registry's.
    #[allow(dead_code)] // made by optional features only
    Gathered,
}

/// What a family shows in one scrape.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sample<'r> {
    /// A float value (the success rate, `target_info`'s 1).
    Value(f64),
    /// An integer value (a counter, the fleet size).
    Count(u64),
    /// A histogram's counts, and its count.
    Histogram(&'r HistogramSnapshot, u64),
    /// The series of a [`Shape::HistogramSeries`] family, in `gather`'s order.
    Series(&'r [HttpSeries]),
    /// The series of a family known only at scrape time, each with its own
    /// labels (a [`Shape::ValueSeries`] or [`Shape::HistogramSeries`] family).
    #[allow(dead_code)] // made by optional features only
    Gathered(&'r [GatheredSeries]),
}

/// One series of a family known only at scrape time: its labels, and its
/// value (a counter's or gauge's) or its histogram.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GatheredSeries {
    pub(crate) labels: Vec<(String, String)>,
    /// A counter's or gauge's value; a histogram's sum.
    pub(crate) value: f64,
    /// A histogram's cumulative counts, one per bound and the `+Inf` one
    /// (the count) last; empty otherwise.
    pub(crate) cumulative: Vec<u64>,
}

/// One family: everything about it that does not change between scrapes.
#[derive(Debug)]
pub(crate) struct Family {
    /// The family name (for a counter, with `_total`).
    pub(crate) name: String,
    pub(crate) help: Cow<'static, str>,
    pub(crate) kind: Kind,
    /// The labels every sample carries, in order: the scope labels, or
    /// `target_info`'s resource labels.
    pub(crate) labels: Vec<(String, String)>,
    /// A histogram's bucket upper bounds, without `+Inf`; empty otherwise.
    pub(crate) bounds: Vec<f64>,
    source: Source,
}

impl Family {
    fn target_info(resource: &Resource) -> Self {
        Self {
            name: TARGET_INFO_FAMILY.to_string(),
            help: Cow::Borrowed(TARGET_INFO_HELP),
            kind: Kind::Gauge,
            labels: resource.label_pairs(),
            bounds: Vec::new(),
            source: Source::One,
        }
    }

    fn instrument(instrument: &Instrument, kind: Kind, source: Source) -> Self {
        Self {
            name: prometheus_name(instrument),
            help: Cow::Borrowed(instrument.description),
            kind,
            labels: SCOPE_LABELS
                .iter()
                .map(|&(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            bounds: Vec::new(),
            source,
        }
    }

    /// A process family: no labels, as the Prometheus clients write them.
    fn process(family: &ProcessFamily) -> Self {
        Self {
            name: family.name.to_string(),
            help: Cow::Borrowed(family.help),
            kind: family.kind,
            labels: Vec::new(),
            bounds: Vec::new(),
            source: Source::Process(family.value),
        }
    }

    fn histogram(instrument: &Instrument, source: Source, bounds: &Boundaries) -> Self {
        Self {
            bounds: bounds.as_slice().to_vec(),
            ..Self::instrument(instrument, Kind::Histogram, source)
        }
    }

    /// A family known only at scrape time, whose series come with it
    /// ([`Sample::Gathered`]): no labels of its own, a histogram's `bounds`.
    #[allow(dead_code)] // made by optional features only
    pub(crate) fn gathered(name: String, help: String, kind: Kind, bounds: Vec<f64>) -> Self {
        Self {
            name,
            help: Cow::Owned(help),
            kind,
            labels: Vec::new(),
            bounds,
            source: Source::Gathered,
        }
    }

    /// How this family's samples are laid out.
    pub(crate) fn shape(&self) -> Shape {
        match self.source {
            Source::Rollouts | Source::Verifications => Shape::Histogram,
            Source::HttpServer => Shape::HistogramSeries,
            Source::Gathered if self.kind == Kind::Histogram => Shape::HistogramSeries,
            Source::Gathered => Shape::ValueSeries,
            _ => Shape::Single,
        }
    }

    /// The value of a family whose value never changes (`target_info`).
    pub(crate) fn constant(&self) -> Option<Sample<'static>> {
        (self.source == Source::One).then_some(Sample::Value(1.0))
    }

    /// What this family shows in the scrape `r`; `None` while it is absent.
    pub(crate) fn sample<'r>(&self, r: &'r Readings) -> Option<Sample<'r>> {
        let histogram = |snapshot, count| (count > 0).then_some(Sample::Histogram(snapshot, count));
        match self.source {
            Source::One => self.constant(),
            Source::Rollouts => histogram(&r.rollouts, r.rollout_count),
            Source::Verifications => histogram(&r.verifications, r.verify_counts.completed),
            Source::SuccessRate => r.verify_counts.success_rate().map(Sample::Value),
            Source::Completed => Some(Sample::Count(r.verify_counts.completed)),
            Source::Succeeded => Some(Sample::Count(r.verify_counts.succeeded)),
            Source::ServersActive => r.servers_active.map(Sample::Count),
            Source::HttpServer => (!r.http.is_empty()).then_some(Sample::Series(&r.http)),
            Source::Process(value) => value.sample(r.process.as_ref()?),
            // Never in the built model: its series come with it at scrape time.
            Source::Gathered => None,
        }
    }
}

/// Every family of one process, in name order, and the metrics they read.
#[derive(Debug)]
pub(crate) struct Families {
    metrics: Arc<GymMetrics>,
    families: Vec<Family>,
    /// Whether the process families are among them (read at each scrape).
    process: bool,
}

impl Families {
    /// The families of `metrics`; `gym_servers_active` only if they hold a
    /// fleet gauge (the role decided that when they were built); the process
    /// families when `process`.
    pub(crate) fn new(metrics: Arc<GymMetrics>, resource: &Resource, process: bool) -> Self {
        let m = &metrics;
        let mut families = vec![
            Family::target_info(resource),
            Family::histogram(
                &Instrument::ROLLOUT_DURATION,
                Source::Rollouts,
                m.rollout_duration.boundaries(),
            ),
            Family::histogram(
                &Instrument::VERIFY_DURATION,
                Source::Verifications,
                m.verify_duration.boundaries(),
            ),
            Family::instrument(
                &Instrument::VERIFY_SUCCESS_RATE,
                Kind::Gauge,
                Source::SuccessRate,
            ),
            Family::instrument(
                &Instrument::VERIFY_COMPLETED,
                Kind::Counter,
                Source::Completed,
            ),
            Family::instrument(
                &Instrument::VERIFY_SUCCEEDED,
                Kind::Counter,
                Source::Succeeded,
            ),
            Family::histogram(
                &Instrument::HTTP_SERVER_REQUEST_DURATION,
                Source::HttpServer,
                m.http_server_duration.boundaries(),
            ),
        ];
        if m.servers_active.is_some() {
            families.push(Family::instrument(
                &Instrument::SERVERS_ACTIVE,
                Kind::Gauge,
                Source::ServersActive,
            ));
        }
        if process {
            families.extend(PROCESS_FAMILIES.iter().map(Family::process));
        }
        families.sort_by(|a, b| a.name.cmp(&b.name));
        Self {
            metrics,
            families,
            process,
        }
    }

    /// The families, in name order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Family> {
        self.families.iter()
    }

    /// This instant's values of every family.
    pub(crate) fn read(&self) -> Readings {
        Readings::take(&self.metrics, self.process)
    }
}

#[cfg(test)]
mod tests {
    use gym_metrics_api::Role;

    use super::*;

    fn families(role: Role) -> Families {
        families_with(role, false)
    }

    fn families_with(role: Role, process: bool) -> Families {
        let resource = Resource::new(&role, None, &[], &gym_metrics_kit::env::GymEnv::default());
        let metrics = Arc::new(GymMetrics::new(role, Boundaries::default()));
        Families::new(metrics, &resource, process)
    }

    fn names(f: &Families) -> Vec<&str> {
        f.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn every_family_in_name_order_the_fleet_gauge_only_where_the_role_writes_it() {
        let orchestrator = families(Role::orchestrator());
        assert_eq!(
            names(&orchestrator),
            [
                "gym_rollout_duration_ms_milliseconds",
                "gym_servers_active",
                "gym_verify_completed_total",
                "gym_verify_duration_ms_milliseconds",
                "gym_verify_succeeded_total",
                "gym_verify_success_rate",
                "http_server_request_duration_seconds",
                "target_info",
            ]
        );
        let server = families(Role::server("s-0", "agent"));
        let mut expected = names(&orchestrator);
        expected.retain(|n| *n != "gym_servers_active");
        assert_eq!(names(&server), expected);
    }

    #[test]
    fn process_families_sit_in_name_order_between_http_and_target_info() {
        let f = families_with(Role::server("s-0", "agent"), true);
        let all = names(&f);
        let at = |n: &str| all.iter().position(|x| *x == n).unwrap();
        assert!(at("http_server_request_duration_seconds") < at("process_cpu_seconds_total"));
        assert!(at("process_virtual_memory_bytes") < at("target_info"));
        assert_eq!(
            all.len(),
            names(&families(Role::server("s-0", "agent"))).len() + 7
        );
    }

    #[test]
    fn nothing_recorded_shows_target_info_and_the_counters_only() {
        let f = families(Role::orchestrator());
        let readings = f.read();
        let shown: Vec<&str> = f
            .iter()
            .filter(|f| f.sample(&readings).is_some())
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(
            shown,
            [
                "gym_verify_completed_total",
                "gym_verify_succeeded_total",
                "target_info"
            ]
        );
        let constant: Vec<&str> = f
            .iter()
            .filter(|f| f.constant().is_some())
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(constant, ["target_info"]);
    }
}
