//! The gym families as a `prometheus` crate collector, for an application
//! that already serves a `prometheus::Registry`: at collection time it sums
//! the shards and builds the metric families OpenTelemetry's exporter would
//! build for the same recordings. `TextEncoder` over a registry holding it
//! writes byte for byte what [`crate::PrometheusHandle::render`] writes
//! (`tests/exposition_matches_opentelemetry.rs`, every scenario); the handle writes that text
//! directly, because building these families and encoding them costs about
//! three times `prometheus-client`'s whole encoder (BENCHMARKS.md, Render).

use std::sync::Arc;

use gym_metrics_api::backend::catalogue::{
    HTTP_SERVER_REQUEST_DURATION, ROLLOUT_DURATION, SERVERS_ACTIVE, VERIFY_COMPLETED,
    VERIFY_DURATION, VERIFY_SUCCEEDED, VERIFY_SUCCESS_RATE,
};
use gym_metrics_api::backend::{catalogue::Instrument, VerifyCounts};
use prometheus::core::{Collector, Desc};
use prometheus::proto::{
    Bucket, Counter, Gauge, Histogram, LabelPair, Metric, MetricFamily, MetricType,
};

use crate::exposition::{TARGET_INFO_HELP, TARGET_INFO_NAME};
use crate::gym_metrics::GymMetrics;
use crate::http_histogram::HttpServerHistogram;
use crate::naming::prometheus_name;
use crate::resource::Resource;
use crate::scope::{SCOPE_NAME, SCOPE_VERSION};
use crate::sharded_histogram::{HistogramSnapshot, ShardedHistogram};

/// The gym families for a `prometheus::Registry` of the application's own
/// (from [`crate::PrometheusHandle::collector`]).
///
/// Families appear as the OpenTelemetry backend's instruments produce them:
/// the histograms and `gym_servers_active` (synchronous instruments) from
/// their first record, the verify counters (observed from the tally) from the
/// start, at 0, and the success rate from the first verification (never NaN);
/// `target_info` is always there.
///
/// ```
/// use gym_metrics_api::backend::Recorder;
/// use prometheus::{Encoder, Registry, TextEncoder};
///
/// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// recorder.record_rollout_duration_ms(120.0);
/// let registry = Registry::new();
/// registry.register(Box::new(handle.collector()))?;
/// let mut text = Vec::new();
/// TextEncoder::new().encode(&registry.gather(), &mut text)?;
/// assert_eq!(String::from_utf8(text)?, handle.render());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct GymCollector {
    metrics: Arc<GymMetrics>,
    scope_labels: Vec<LabelPair>,
    target_info: MetricFamily,
}

impl GymCollector {
    pub(crate) fn new(metrics: Arc<GymMetrics>, resource: &Resource) -> Self {
        let resource_labels = resource
            .label_pairs()
            .iter()
            .map(|(name, value)| label(name, value))
            .collect();
        let target_info = family(
            TARGET_INFO_NAME,
            TARGET_INFO_HELP,
            MetricType::GAUGE,
            gauge_metric(resource_labels, 1.0),
        );
        Self {
            metrics,
            scope_labels: vec![
                label("otel_scope_name", SCOPE_NAME),
                label("otel_scope_version", SCOPE_VERSION),
            ],
            target_info,
        }
    }

    fn histogram(
        &self,
        instrument: &Instrument,
        histogram: &ShardedHistogram,
        snapshot: &HistogramSnapshot,
    ) -> Option<MetricFamily> {
        let count = snapshot.count();
        if count == 0 {
            return None;
        }
        let h = histogram_value(
            histogram.boundaries().as_slice(),
            snapshot.cumulative_counts(),
            count,
            snapshot.sum,
        );
        let mut m = Metric::default();
        m.set_label(self.scope_labels.clone());
        m.set_histogram(h);
        Some(instrument_family(instrument, MetricType::HISTOGRAM, m))
    }

    /// `http.server.request.duration`: one metric per attribute tuple, labels
    /// sorted by name before the scope labels (as OpenTelemetry's exporter
    /// writes them); absent until the first request.
    fn http_server(&self, histogram: &HttpServerHistogram) -> Option<MetricFamily> {
        let series = histogram.snapshot();
        if series.is_empty() {
            return None;
        }
        let bounds = histogram.boundaries().as_slice();
        let metrics = series
            .iter()
            .map(|(key, counts)| {
                let h = histogram_value(
                    bounds,
                    counts.cumulative_counts(),
                    counts.count(),
                    counts.sum,
                );
                let mut labels: Vec<LabelPair> = key
                    .labels()
                    .into_iter()
                    .map(|(name, value)| label(name, value))
                    .collect();
                labels.extend(self.scope_labels.iter().cloned());
                let mut m = Metric::default();
                m.set_label(labels);
                m.set_histogram(h);
                m
            })
            .collect();
        let mut f = MetricFamily::default();
        f.set_name(prometheus_name(&HTTP_SERVER_REQUEST_DURATION));
        f.set_help(HTTP_SERVER_REQUEST_DURATION.description.to_string());
        f.set_field_type(MetricType::HISTOGRAM);
        f.set_metric(metrics);
        Some(f)
    }

    fn gauge(&self, instrument: &Instrument, value: f64) -> MetricFamily {
        instrument_family(
            instrument,
            MetricType::GAUGE,
            gauge_metric(self.scope_labels.clone(), value),
        )
    }

    fn counter(&self, instrument: &Instrument, value: u64) -> MetricFamily {
        let mut c = Counter::default();
        c.set_value(value as f64);
        let mut m = Metric::default();
        m.set_label(self.scope_labels.clone());
        m.set_counter(c);
        instrument_family(instrument, MetricType::COUNTER, m)
    }
}

impl std::fmt::Debug for GymCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GymCollector")
            .field("role", &self.metrics.role)
            .finish_non_exhaustive()
    }
}

impl Collector for GymCollector {
    fn desc(&self) -> Vec<&Desc> {
        // Families come and go (absent until first recorded), as in
        // OpenTelemetry's exporter, so nothing is described up front.
        Vec::new()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let m = &self.metrics;
        let mut families = vec![self.target_info.clone()];
        let rollouts = m.rollout_duration.snapshot();
        families.extend(self.histogram(&ROLLOUT_DURATION, &m.rollout_duration, &rollouts));
        // One pass over the verify shards gives the histogram, both counters
        // and the rate, all from the same instant.
        let verifications = m.verify_duration.snapshot();
        families.extend(self.histogram(&VERIFY_DURATION, &m.verify_duration, &verifications));
        let counts = VerifyCounts {
            completed: verifications.count(),
            succeeded: verifications.successes,
        };
        if let Some(rate) = counts.success_rate() {
            families.push(self.gauge(&VERIFY_SUCCESS_RATE, rate));
        }
        families.push(self.counter(&VERIFY_COMPLETED, counts.completed));
        families.push(self.counter(&VERIFY_SUCCEEDED, counts.succeeded));
        if m.role.is_orchestrator() {
            if let Some(servers) = m.servers_active.get() {
                families.push(self.gauge(&SERVERS_ACTIVE, servers as f64));
            }
        }
        families.extend(self.http_server(&m.http_server_duration));
        families
    }
}

fn instrument_family(instrument: &Instrument, kind: MetricType, metric: Metric) -> MetricFamily {
    family(
        &prometheus_name(instrument),
        instrument.description,
        kind,
        metric,
    )
}

fn family(name: &str, help: &str, kind: MetricType, metric: Metric) -> MetricFamily {
    let mut f = MetricFamily::default();
    f.set_name(name.to_string());
    f.set_help(help.to_string());
    f.set_field_type(kind);
    f.set_metric(vec![metric]);
    f
}

fn gauge_metric(labels: Vec<LabelPair>, value: f64) -> Metric {
    let mut g = Gauge::default();
    g.set_value(value);
    let mut m = Metric::default();
    m.set_label(labels);
    m.set_gauge(g);
    m
}

fn label(name: &str, value: &str) -> LabelPair {
    let mut l = LabelPair::default();
    l.set_name(name.to_string());
    l.set_value(value.to_string());
    l
}

/// One histogram value: cumulative counts per upper bound (the `+Inf` bucket
/// is the count), the count and the sum.
fn histogram_value(
    bounds: &[f64],
    cumulative: impl IntoIterator<Item = u64>,
    count: u64,
    sum: f64,
) -> Histogram {
    let buckets = bounds
        .iter()
        .zip(cumulative)
        .map(|(&bound, cumulative)| {
            let mut b = Bucket::default();
            b.set_upper_bound(bound);
            b.set_cumulative_count(cumulative);
            b
        })
        .collect();
    let mut h = Histogram::default();
    h.set_sample_count(count);
    h.set_sample_sum(sum);
    h.set_bucket(buckets);
    h
}
