//! The exposition, written straight from the shard sums into one buffer.
//!
//! Everything that does not change between scrapes (HELP and TYPE lines,
//! names, the scope label set, each bucket's `le` label, the whole
//! `target_info` family) is rendered once, at build time, for each format;
//! a scrape reads the values and appends them between those pieces. Families
//! come in name order and HTTP series in label-value order, as the
//! `prometheus` registry's `gather` ordered them, and appear as the
//! OpenTelemetry backend's instruments produce them: the histograms and
//! `gym_servers_active` from their first record, the verify counters from the
//! start (at 0), the success rate from the first verification (never NaN);
//! `target_info` is always there.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gym_metrics_api::backend::catalogue::{
    HTTP_SERVER_REQUEST_DURATION, ROLLOUT_DURATION, SERVERS_ACTIVE, VERIFY_COMPLETED,
    VERIFY_DURATION, VERIFY_SUCCEEDED, VERIFY_SUCCESS_RATE,
};
use gym_metrics_api::backend::{catalogue::Instrument, VerifyCounts};

use crate::gym_metrics::GymMetrics;
use crate::http_histogram::HttpSeriesKey;
use crate::naming::prometheus_name;
use crate::resource::Resource;
use crate::scope::{SCOPE_NAME, SCOPE_VERSION};
use crate::sharded_histogram::HistogramSnapshot;
use crate::text_format::{label_set, push_count, push_label_pairs, Kind, TextFormat};

pub(crate) const TARGET_INFO_NAME: &str = "target_info";
pub(crate) const TARGET_INFO_HELP: &str = "Target metadata";

/// The scope labels every gym series carries, first name then version.
const SCOPE_LABELS: [(&str, &str); 2] = [
    ("otel_scope_name", SCOPE_NAME),
    ("otel_scope_version", SCOPE_VERSION),
];

/// Renders the exposition of one process's metrics in either format.
#[derive(Debug)]
pub(crate) struct Exposition {
    metrics: Arc<GymMetrics>,
    prometheus: Template,
    openmetrics: Template,
    /// The longest exposition written so far: the next buffer's capacity.
    size_hint: AtomicUsize,
}

impl Exposition {
    pub(crate) fn new(metrics: Arc<GymMetrics>, resource: &Resource) -> Self {
        let prometheus = Template::new(&metrics, resource, TextFormat::Prometheus);
        let openmetrics = Template::new(&metrics, resource, TextFormat::OpenMetrics);
        Self {
            metrics,
            prometheus,
            openmetrics,
            size_hint: AtomicUsize::new(0),
        }
    }

    /// The current exposition in `format`.
    pub(crate) fn render(&self, format: TextFormat) -> String {
        let template = match format {
            TextFormat::Prometheus => &self.prometheus,
            TextFormat::OpenMetrics => &self.openmetrics,
        };
        let readings = Readings::take(&self.metrics);
        let mut out = String::with_capacity(self.size_hint.load(Ordering::Relaxed));
        for family in &template.families {
            family.write(format, &readings, &mut out);
        }
        if format == TextFormat::OpenMetrics {
            out.push_str("# EOF\n");
        }
        self.size_hint.fetch_max(out.len(), Ordering::Relaxed);
        out
    }
}

/// The values of one scrape, read once so every family shows the same instant.
struct Readings {
    rollouts: HistogramSnapshot,
    verifications: HistogramSnapshot,
    servers_active: Option<u64>,
    /// HTTP series with their labels (sorted by name), in label-value order.
    http: Vec<(Vec<(&'static str, &'static str)>, HistogramSnapshot)>,
}

impl Readings {
    fn take(m: &GymMetrics) -> Self {
        let rollouts = m.rollout_duration.snapshot();
        // One pass over the verify shards gives the histogram, both counters
        // and the rate, all from the same instant.
        let verifications = m.verify_duration.snapshot();
        let servers_active = if m.role.is_orchestrator() {
            m.servers_active.get()
        } else {
            None
        };
        let mut http: Vec<_> = m
            .http_server_duration
            .snapshot()
            .into_iter()
            .map(|(key, counts)| (HttpSeriesKey::labels(&key), counts))
            .collect();
        // As `gather` sorted metrics: by label count, then value by value.
        http.sort_by(|(a, _), (b, _)| {
            a.len()
                .cmp(&b.len())
                .then_with(|| a.iter().map(|l| l.1).cmp(b.iter().map(|l| l.1)))
        });
        Self {
            rollouts,
            verifications,
            servers_active,
            http,
        }
    }

    fn verify_counts(&self) -> VerifyCounts {
        VerifyCounts {
            completed: self.verifications.count(),
            succeeded: self.verifications.successes,
        }
    }
}

/// The families of one format, in name order.
#[derive(Debug)]
struct Template {
    families: Vec<Family>,
}

impl Template {
    fn new(metrics: &GymMetrics, resource: &Resource, format: TextFormat) -> Self {
        let resource_labels = resource.label_pairs();
        let target_info = format!(
            "{}{TARGET_INFO_NAME}{} 1\n",
            format.header(TARGET_INFO_NAME, TARGET_INFO_HELP, Kind::Gauge),
            label_set(
                resource_labels
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
            ),
        );
        let rollout_bounds = metrics.rollout_duration.boundaries().as_slice();
        let verify_bounds = metrics.verify_duration.boundaries().as_slice();
        let http_bounds = metrics.http_server_duration.boundaries().as_slice();
        let mut families = vec![
            (TARGET_INFO_NAME.to_string(), Family::Constant(target_info)),
            Family::histogram(&ROLLOUT_DURATION, Source::Rollouts, rollout_bounds, format),
            Family::histogram(
                &VERIFY_DURATION,
                Source::Verifications,
                verify_bounds,
                format,
            ),
            Family::single(
                &VERIFY_SUCCESS_RATE,
                Kind::Gauge,
                Source::SuccessRate,
                format,
            ),
            Family::single(&VERIFY_COMPLETED, Kind::Counter, Source::Completed, format),
            Family::single(&VERIFY_SUCCEEDED, Kind::Counter, Source::Succeeded, format),
            Family::single(&SERVERS_ACTIVE, Kind::Gauge, Source::ServersActive, format),
            Family::http(http_bounds, format),
        ];
        families.sort_by(|a, b| a.0.cmp(&b.0));
        Self {
            families: families.into_iter().map(|(_, f)| f).collect(),
        }
    }
}

/// Where a family's values come from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Rollouts,
    Verifications,
    SuccessRate,
    Completed,
    Succeeded,
    ServersActive,
}

/// One family: its constant parts, and where its values come from.
#[derive(Debug)]
enum Family {
    /// Written as is (`target_info`).
    Constant(String),
    /// A gauge or counter with the scope labels only.
    Single {
        header: String,
        /// `name{scope labels} `.
        prefix: String,
        source: Source,
    },
    /// A gym histogram with the scope labels only.
    Histogram {
        header: String,
        /// `name_bucket{scope labels,le="bound"} `, the last one `+Inf`.
        buckets: Vec<String>,
        /// `name_sum{scope labels} `.
        sum: String,
        /// `name_count{scope labels} `.
        count: String,
        source: Source,
    },
    /// `http.server.request.duration`: one series per attribute tuple.
    Http(HttpLines),
}

/// The constant parts of the HTTP family; a series writes its own labels
/// between a name and a tail.
#[derive(Debug)]
struct HttpLines {
    header: String,
    /// `name_bucket{`, `name_sum{`, `name_count{`.
    bucket_name: String,
    sum_name: String,
    count_name: String,
    /// `scope labels,le="bound"} `, the last one `+Inf`.
    bucket_tails: Vec<String>,
    /// `scope labels} `.
    tail: String,
}

impl Family {
    fn single(
        instrument: &Instrument,
        kind: Kind,
        source: Source,
        format: TextFormat,
    ) -> (String, Self) {
        let name = prometheus_name(instrument);
        let family = Family::Single {
            header: format.header(&name, instrument.description, kind),
            prefix: format!("{name}{} ", label_set(SCOPE_LABELS)),
            source,
        };
        (name, family)
    }

    fn histogram(
        instrument: &Instrument,
        source: Source,
        bounds: &[f64],
        format: TextFormat,
    ) -> (String, Self) {
        let name = prometheus_name(instrument);
        let scope = label_set(SCOPE_LABELS);
        let buckets = le_values(bounds, format)
            .map(|le| {
                let mut line = format!("{name}_bucket{{");
                push_label_pairs(&mut line, SCOPE_LABELS);
                line.push_str(&format!("le=\"{le}\"}} "));
                line
            })
            .collect();
        let family = Family::Histogram {
            header: format.header(&name, instrument.description, Kind::Histogram),
            buckets,
            sum: format!("{name}_sum{scope} "),
            count: format!("{name}_count{scope} "),
            source,
        };
        (name, family)
    }

    fn http(bounds: &[f64], format: TextFormat) -> (String, Self) {
        let name = prometheus_name(&HTTP_SERVER_REQUEST_DURATION);
        let mut scope = String::new();
        push_label_pairs(&mut scope, SCOPE_LABELS);
        let bucket_tails = le_values(bounds, format)
            .map(|le| format!("{scope}le=\"{le}\"}} "))
            .collect();
        scope.pop();
        let lines = HttpLines {
            header: format.header(
                &name,
                HTTP_SERVER_REQUEST_DURATION.description,
                Kind::Histogram,
            ),
            bucket_name: format!("{name}_bucket{{"),
            sum_name: format!("{name}_sum{{"),
            count_name: format!("{name}_count{{"),
            bucket_tails,
            tail: format!("{scope}}} "),
        };
        (name, Family::Http(lines))
    }

    fn write(&self, format: TextFormat, readings: &Readings, out: &mut String) {
        match self {
            Family::Constant(text) => out.push_str(text),
            Family::Single {
                header,
                prefix,
                source,
            } => {
                let counts = readings.verify_counts();
                match source {
                    Source::SuccessRate => {
                        if let Some(rate) = counts.success_rate() {
                            out.push_str(header);
                            out.push_str(prefix);
                            format.push_value(out, rate);
                            out.push('\n');
                        }
                    }
                    Source::ServersActive => {
                        if let Some(servers) = readings.servers_active {
                            write_count(out, header, prefix, servers);
                        }
                    }
                    Source::Completed => write_count(out, header, prefix, counts.completed),
                    Source::Succeeded => write_count(out, header, prefix, counts.succeeded),
                    Source::Rollouts | Source::Verifications => {}
                }
            }
            Family::Histogram {
                header,
                buckets,
                sum,
                count,
                source,
            } => {
                let snapshot = match source {
                    Source::Rollouts => &readings.rollouts,
                    _ => &readings.verifications,
                };
                let total = snapshot.count();
                // Absent until the first record.
                if total == 0 {
                    return;
                }
                out.push_str(header);
                let mut cumulative = 0u64;
                for (prefix, &c) in buckets.iter().zip(&snapshot.bucket_counts) {
                    cumulative = cumulative.wrapping_add(c);
                    out.push_str(prefix);
                    push_count(out, cumulative);
                    out.push('\n');
                }
                out.push_str(sum);
                format.push_value(out, snapshot.sum);
                out.push('\n');
                out.push_str(count);
                push_count(out, total);
                out.push('\n');
            }
            Family::Http(lines) => lines.write(format, &readings.http, out),
        }
    }
}

impl HttpLines {
    fn write(
        &self,
        format: TextFormat,
        series: &[(Vec<(&'static str, &'static str)>, HistogramSnapshot)],
        out: &mut String,
    ) {
        // Absent until the first request.
        if series.is_empty() {
            return;
        }
        out.push_str(&self.header);
        for (labels, counts) in series {
            let mut cumulative = 0u64;
            for (tail, &c) in self.bucket_tails.iter().zip(&counts.bucket_counts) {
                cumulative = cumulative.wrapping_add(c);
                out.push_str(&self.bucket_name);
                push_label_pairs(out, labels.iter().copied());
                out.push_str(tail);
                push_count(out, cumulative);
                out.push('\n');
            }
            out.push_str(&self.sum_name);
            push_label_pairs(out, labels.iter().copied());
            out.push_str(&self.tail);
            format.push_value(out, counts.sum);
            out.push('\n');
            out.push_str(&self.count_name);
            push_label_pairs(out, labels.iter().copied());
            out.push_str(&self.tail);
            push_count(out, counts.count());
            out.push('\n');
        }
    }
}

/// A gauge or counter line with an integer value, header first.
fn write_count(out: &mut String, header: &str, prefix: &str, value: u64) {
    out.push_str(header);
    out.push_str(prefix);
    push_count(out, value);
    out.push('\n');
}

/// Each bound's `le` value, then `+Inf`.
fn le_values(bounds: &[f64], format: TextFormat) -> impl Iterator<Item = String> + '_ {
    bounds
        .iter()
        .map(move |&b| format.bound(b))
        .chain(std::iter::once("+Inf".to_string()))
}
