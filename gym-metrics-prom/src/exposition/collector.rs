//! The gym families as a `prometheus` crate collector, for an application
//! that already serves a `prometheus::Registry`: at collection time it sums
//! the shards and turns our families (`gym.rs`) into the
//! registry's metric families. `TextEncoder` over a registry holding it
//! writes byte for byte what [`crate::PrometheusHandle::render`] writes
//! (`tests/installs_nothing/exposition_matches_opentelemetry.rs`, every scenario); the handle
//! writes that text directly, because building these families and encoding
//! them costs about three times `prometheus-client`'s whole encoder
//! (BENCHMARKS.md, Render).

use std::sync::Arc;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{
    Bucket, Counter, Gauge, Histogram, LabelPair, Metric, MetricFamily, MetricType,
};

use super::gym::{GymFamilies, Sample};
use super::model::{Buckets, Family, Kind, Value};

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
    families: Arc<GymFamilies>,
    /// Each family's labels as label pairs, in the families' order.
    labels: Vec<Vec<LabelPair>>,
}

impl GymCollector {
    pub(crate) fn new(families: Arc<GymFamilies>) -> Self {
        let labels = families
            .iter()
            .map(|f| f.family.labels.iter().map(|(n, v)| label(n, v)).collect())
            .collect();
        Self { families, labels }
    }
}

impl std::fmt::Debug for GymCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .families
            .iter()
            .map(|f| f.family.name.as_str())
            .collect();
        f.debug_struct("GymCollector")
            .field("families", &names)
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
        let readings = self.families.read();
        self.families
            .iter()
            .zip(&self.labels)
            .filter_map(|(family, labels)| {
                let sample = family.sample(&readings)?;
                Some(metric_family(&family.family, labels, sample))
            })
            .collect()
    }
}

/// `family` showing `sample`, its samples carrying `labels`.
fn metric_family(family: &Family, labels: &[LabelPair], sample: Sample<'_>) -> MetricFamily {
    let metrics = sample
        .series()
        .map(|(attributes, value)| {
            // A series' attributes first, then the family's labels.
            let mut pairs: Vec<LabelPair> = attributes.map(|(n, v)| label(n, v)).collect();
            pairs.extend_from_slice(labels);
            match value {
                Value::Count(n) => number(family.kind, pairs, n as f64),
                Value::Float(v) => number(family.kind, pairs, v),
                Value::Histogram(h) => histogram(pairs, &family.bounds, h.buckets, h.sum),
            }
        })
        .collect();
    let mut f = MetricFamily::default();
    f.set_name(family.name.clone());
    f.set_help(family.help.to_string());
    f.set_field_type(match family.kind {
        Kind::Counter => MetricType::COUNTER,
        Kind::Gauge => MetricType::GAUGE,
        Kind::Histogram => MetricType::HISTOGRAM,
    });
    f.set_metric(metrics);
    f
}

/// A counter's or gauge's one metric (a histogram family has no single value).
fn number(kind: Kind, labels: Vec<LabelPair>, value: f64) -> Metric {
    let mut m = Metric::default();
    m.set_label(labels);
    if kind == Kind::Counter {
        let mut c = Counter::default();
        c.set_value(value);
        m.set_counter(c);
    } else {
        let mut g = Gauge::default();
        g.set_value(value);
        m.set_gauge(g);
    }
    m
}

/// One histogram metric: cumulative counts per upper bound (the `+Inf`
/// bucket is the count), the count and the sum.
fn histogram(labels: Vec<LabelPair>, bounds: &[f64], counts: Buckets<'_>, sum: f64) -> Metric {
    let buckets = bounds
        .iter()
        .zip(counts.cumulative())
        .map(|(&bound, cumulative)| {
            let mut b = Bucket::default();
            b.set_upper_bound(bound);
            b.set_cumulative_count(cumulative);
            b
        })
        .collect();
    let mut h = Histogram::default();
    h.set_sample_count(counts.count());
    h.set_sample_sum(sum);
    h.set_bucket(buckets);
    let mut m = Metric::default();
    m.set_label(labels);
    m.set_histogram(h);
    m
}

fn label(name: &str, value: &str) -> LabelPair {
    let mut l = LabelPair::default();
    l.set_name(name.to_string());
    l.set_value(value.to_string());
    l
}
