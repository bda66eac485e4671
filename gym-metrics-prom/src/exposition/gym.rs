//! Our own families, the gym instruments' (and the process's, when on):
//! which families this process has, in name order, and what each shows in
//! a scrape, or that it is absent. The writer and the `prometheus` crate
//! collector are both produced from this one list.
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

use gym_metrics_api::backend::{Boundaries, Instrument};
use gym_metrics_kit::naming::prometheus_name;
use gym_metrics_kit::naming::TARGET_INFO_FAMILY;
use gym_metrics_kit::process::ProcessReading;

use super::http_server_duration::{self, HttpServerDurationSeries};
use super::model::{gather_order, Buckets, Family, Histogram, HttpSeries, Kind, Value};
use super::process::{ProcessFamily, ProcessValue, PROCESS_FAMILIES};
use crate::resource::Resource;
use crate::scope::{SCOPE_NAME, SCOPE_VERSION};
use gym_metrics_kit::recording::FleetGauge;
use gym_metrics_kit::recording::GymMetrics;
use gym_metrics_kit::recording::HistogramSnapshot;
use gym_metrics_kit::recording::HttpSeriesKey;

const TARGET_INFO_HELP: &str = "Target metadata";

/// The scope labels every gym series carries, first name then version.
pub(crate) const SCOPE_LABELS: [(&str, &str); 2] = [
    ("otel_scope_name", SCOPE_NAME),
    ("otel_scope_version", SCOPE_VERSION),
];

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
    /// The old `http.server.duration`, derived from the same counts.
    HttpServerDuration,
    /// A value of this process's own (`process.rs`).
    Process(ProcessValue),
}

/// What one of our families shows in one scrape.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sample<'r> {
    /// One series, with no labels of its own.
    One(Value<'r>),
    /// The HTTP histogram's series, in `gather`'s order.
    Http(&'r [HttpSeries]),
    /// The old HTTP histogram's series, in `gather`'s order.
    HttpServerDuration(&'r [HttpServerDurationSeries]),
}

/// A histogram snapshot as the model's value.
pub(crate) fn histogram(s: &HistogramSnapshot) -> Value<'_> {
    Value::Histogram(Histogram {
        buckets: Buckets::PerBucket(&s.bucket_counts),
        sum: s.sum,
        native: Some(&s.native),
        exemplars: &s.exemplars,
    })
}

impl<'r> Sample<'r> {
    /// Each series: its own labels and its value.
    pub(crate) fn series(
        self,
    ) -> impl Iterator<
        Item = (
            std::iter::Copied<std::slice::Iter<'r, (&'static str, &'static str)>>,
            Value<'r>,
        ),
    > {
        let (one, http, old) = match self {
            Sample::One(value) => (Some(value), &[][..], &[][..]),
            Sample::Http(series) => (None, series, &[][..]),
            Sample::HttpServerDuration(series) => (None, &[][..], series),
        };
        let one = one.map(|value| ([].iter().copied(), value));
        let http = http.iter().map(|(l, s)| (l.iter().copied(), histogram(s)));
        let old = old.iter().map(|(l, buckets, sum)| {
            let classic = Histogram::classic(Buckets::PerBucket(buckets), *sum);
            (l.iter().copied(), Value::Histogram(classic))
        });
        one.into_iter().chain(http).chain(old)
    }
}

/// One of our families and where its value comes from.
#[derive(Debug)]
pub(crate) struct GymFamily {
    pub(crate) family: Family,
    source: Source,
}

impl GymFamily {
    fn target_info(resource: &Resource) -> Self {
        Self {
            family: Family {
                name: TARGET_INFO_FAMILY.to_string(),
                help: Cow::Borrowed(TARGET_INFO_HELP),
                kind: Kind::Gauge,
                labels: resource.label_pairs(),
                bounds: Vec::new(),
            },
            source: Source::One,
        }
    }

    fn instrument(instrument: &Instrument, kind: Kind, source: Source) -> Self {
        Self {
            family: Family {
                name: prometheus_name(instrument),
                help: Cow::Borrowed(instrument.description),
                kind,
                labels: SCOPE_LABELS
                    .iter()
                    .map(|&(n, v)| (n.to_string(), v.to_string()))
                    .collect(),
                bounds: Vec::new(),
            },
            source,
        }
    }

    /// A process family: no labels, as the Prometheus clients write them.
    fn process(family: &ProcessFamily) -> Self {
        Self {
            family: Family {
                name: family.name.to_string(),
                help: Cow::Borrowed(family.help),
                kind: family.kind,
                labels: Vec::new(),
                bounds: Vec::new(),
            },
            source: Source::Process(family.value),
        }
    }

    fn histogram(instrument: &Instrument, source: Source, bounds: &Boundaries) -> Self {
        let mut family = Self::instrument(instrument, Kind::Histogram, source);
        family.family.bounds = bounds.as_slice().to_vec();
        family
    }

    /// The value of a family whose value never changes (`target_info`).
    pub(crate) fn constant(&self) -> Option<Sample<'static>> {
        (self.source == Source::One).then_some(Sample::One(Value::Float(1.0)))
    }

    /// What this family shows in the scrape `r`; `None` while it is absent.
    pub(crate) fn sample<'r>(&self, r: &'r Readings) -> Option<Sample<'r>> {
        let histogram = |snapshot, count| (count > 0).then(|| Sample::One(histogram(snapshot)));
        let count = |n| Sample::One(Value::Count(n));
        match self.source {
            Source::One => self.constant(),
            Source::Rollouts => histogram(&r.rollouts, r.rollouts.count()),
            Source::Verifications => histogram(&r.verifications, r.verifications.count()),
            Source::SuccessRate => {
                (r.verifications.success_rate()).map(|v| Sample::One(Value::Float(v)))
            }
            Source::Completed => Some(count(r.verifications.count())),
            Source::Succeeded => Some(count(r.verifications.successes)),
            Source::ServersActive => r.servers_active.map(count),
            Source::HttpServer => (!r.http.is_empty()).then_some(Sample::Http(&r.http)),
            Source::HttpServerDuration => (!r.http_server_duration.is_empty())
                .then_some(Sample::HttpServerDuration(&r.http_server_duration)),
            Source::Process(value) => value.sample(r.process.as_ref()?).map(Sample::One),
        }
    }
}

/// Every family of one process, in name order, and the metrics they read.
#[derive(Debug)]
pub(crate) struct GymFamilies {
    metrics: Arc<GymMetrics>,
    families: Vec<GymFamily>,
    /// Whether the process families are among them (read at each scrape).
    process: bool,
    /// Whether the old HTTP family is among them (derived at each scrape).
    http_dup: bool,
}

impl GymFamilies {
    /// The families of `metrics`; `gym_servers_active` only if they hold a
    /// fleet gauge (the role decided that when they were built); the process
    /// families when `process`; the old HTTP family when `http_dup`.
    pub(crate) fn new(
        metrics: Arc<GymMetrics>,
        resource: &Resource,
        process: bool,
        http_dup: bool,
    ) -> Self {
        let m = &metrics;
        let mut families = vec![
            GymFamily::target_info(resource),
            GymFamily::histogram(
                &Instrument::ROLLOUT_DURATION,
                Source::Rollouts,
                m.rollout_duration.boundaries(),
            ),
            GymFamily::histogram(
                &Instrument::VERIFY_DURATION,
                Source::Verifications,
                m.verify_duration.boundaries(),
            ),
            GymFamily::instrument(
                &Instrument::VERIFY_SUCCESS_RATE,
                Kind::Gauge,
                Source::SuccessRate,
            ),
            GymFamily::instrument(
                &Instrument::VERIFY_COMPLETED,
                Kind::Counter,
                Source::Completed,
            ),
            GymFamily::instrument(
                &Instrument::VERIFY_SUCCEEDED,
                Kind::Counter,
                Source::Succeeded,
            ),
            GymFamily::histogram(
                &Instrument::HTTP_SERVER_REQUEST_DURATION,
                Source::HttpServer,
                m.http_server_request_duration.boundaries(),
            ),
        ];
        if m.servers_active.is_some() {
            families.push(GymFamily::instrument(
                &Instrument::SERVERS_ACTIVE,
                Kind::Gauge,
                Source::ServersActive,
            ));
        }
        if process {
            families.extend(PROCESS_FAMILIES.iter().map(GymFamily::process));
        }
        if http_dup {
            let old = &Instrument::HTTP_SERVER_DURATION_OLD;
            let mut family =
                GymFamily::instrument(old, Kind::Histogram, Source::HttpServerDuration);
            family.family.bounds = Instrument::HTTP_SERVER_DURATION_OLD_BOUNDARIES_MS.to_vec();
            families.push(family);
        }
        families.sort_by(|a, b| a.family.name.cmp(&b.family.name));
        Self {
            metrics,
            families,
            process,
            http_dup,
        }
    }

    /// The families, in name order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, GymFamily> {
        self.families.iter()
    }

    /// This instant's values of every family.
    pub(crate) fn read(&self) -> Readings {
        Readings::take(&self.metrics, self.process, self.http_dup)
    }
}

/// One scrape's values: every shard summed once, so that all the families
/// of a scrape show the same instant.
#[derive(Debug)]
pub(crate) struct Readings {
    rollouts: HistogramSnapshot,
    /// Also the verify counters and the rate: its count and successes, so
    /// the counters, the rate and the histogram always agree.
    verifications: HistogramSnapshot,
    /// `None` before the first write, and always for a role without the gauge.
    servers_active: Option<u64>,
    /// HTTP series in label-value order.
    http: Vec<HttpSeries>,
    /// The same as the old HTTP family's series, when it is on.
    http_server_duration: Vec<HttpServerDurationSeries>,
    /// This process's values, when the process families are on and `/proc`
    /// could be read.
    process: Option<ProcessReading>,
}

impl Readings {
    /// Sums the shards of `m`, reads the process's values if `process`, and
    /// derives the old HTTP series if `http_dup`.
    fn take(m: &GymMetrics, process: bool, http_dup: bool) -> Self {
        // One pass over the verify shards gives the histogram, both counters
        // and the rate, all from the same instant.
        let verifications = m.verify_duration.snapshot();
        let mut http: Vec<HttpSeries> = m
            .http_server_request_duration
            .snapshot()
            .into_iter()
            .map(|(key, counts)| (HttpSeriesKey::labels(&key), counts))
            .collect();
        http.sort_by(|(a, _), (b, _)| gather_order(a, b));
        Self {
            rollouts: m.rollout_duration.snapshot(),
            verifications,
            servers_active: m.servers_active.as_ref().and_then(FleetGauge::get),
            http_server_duration: if http_dup {
                http_server_duration::derive(&http)
            } else {
                Vec::new()
            },
            http,
            process: if process {
                super::process::read()
            } else {
                None
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use gym_metrics_api::Role;

    use super::*;

    fn families(role: Role) -> GymFamilies {
        families_with(role, false)
    }

    fn families_with(role: Role, process: bool) -> GymFamilies {
        let resource = Resource::new(&role, None, &[], &gym_metrics_kit::env::GymEnv::default());
        let metrics = Arc::new(GymMetrics::new(
            role,
            Boundaries::default(),
            gym_metrics_kit::recording::NativeConfig::default(),
        ));
        GymFamilies::new(metrics, &resource, process, false)
    }

    fn names(f: &GymFamilies) -> Vec<&str> {
        f.iter().map(|f| f.family.name.as_str()).collect()
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
            .map(|f| f.family.name.as_str())
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
            .map(|f| f.family.name.as_str())
            .collect();
        assert_eq!(constant, ["target_info"]);
    }
}
