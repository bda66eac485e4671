//! The `metrics::Recorder` the Prometheus backend installs (or hands out)
//! with the feature `metrics-facade`.

use std::sync::Arc;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, SharedString, Unit};

use super::registry::{AnySeries, Registry};
use crate::exposition::model::Kind;

/// The `metrics` facade bridged into this backend's exposition: `counter!`,
/// `gauge!` and `histogram!` from the application and from its dependencies
/// appear after the gym families on the same `/metrics`, labelled
/// `otel_scope_name="metrics"`. Installed by [`crate::PrometheusBuilder::install`]
/// (and `install_recorder`) when the builder was given
/// [`crate::PrometheusBuilder::with_metrics_facade`]; from `build`, take it
/// from [`crate::PrometheusHandle::metrics_recorder`] and install it yourself
/// (or use it locally, as here).
///
/// ```
/// use gym_metrics_kit::bridge::MetricsBridgeOptions;
/// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new()
///     .with_metrics_facade(MetricsBridgeOptions::new())
///     .build()?;
/// let bridge = handle.metrics_recorder().expect("asked for");
/// metrics::with_local_recorder(&bridge, || {
///     metrics::describe_counter!("jobs.done", "Jobs finished");
///     metrics::counter!("jobs.done", "queue" => "fast").increment(2);
/// });
/// let text = handle.render();
/// assert!(text.contains("# HELP jobs_done_total Jobs finished\n"));
/// assert!(text.contains("jobs_done_total{queue=\"fast\",otel_scope_name=\"metrics\"} 2\n"));
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct MetricsBridgeRecorder {
    registry: Arc<Registry>,
}

/// What the bridge refused or folded so far (each also logged once).
///
/// ```
/// let stats = gym_metrics_prom::MetricsBridgeStats::default();
/// assert_eq!(stats.overflowed + stats.refused, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetricsBridgeStats {
    /// Registrations of a label set past an instrument's cardinality limit,
    /// recorded into its `otel_metric_overflow="true"` series.
    pub overflowed: u64,
    /// `metrics` instruments not exported: a name that would meet a gym
    /// family or another family of another type, or nothing of which is left
    /// for a Prometheus name.
    pub refused: u64,
}

impl MetricsBridgeRecorder {
    pub(crate) fn new(registry: Arc<Registry>) -> Self {
        Self { registry }
    }

    /// What was refused or folded into an overflow series so far.
    ///
    /// ```
    /// use gym_metrics_kit::bridge::MetricsBridgeOptions;
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new()
    ///     .with_metrics_facade(MetricsBridgeOptions::new())
    ///     .build()?;
    /// let bridge = handle.metrics_recorder().expect("asked for");
    /// metrics::with_local_recorder(&bridge, || metrics::gauge!("target_info").set(1.0));
    /// assert_eq!(bridge.stats().refused, 1); // our family's name
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn stats(&self) -> MetricsBridgeStats {
        MetricsBridgeStats {
            overflowed: self.registry.overflowed(),
            refused: self.registry.refused(),
        }
    }
}

impl metrics::Recorder for MetricsBridgeRecorder {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.registry
            .describe(&key, Kind::Counter, unit, &description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.registry
            .describe(&key, Kind::Gauge, unit, &description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.registry
            .describe(&key, Kind::Histogram, unit, &description);
    }

    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        match self.registry.register(key, Kind::Counter) {
            Some(AnySeries::Counter(series)) => Counter::from_arc(series),
            _ => Counter::noop(),
        }
    }

    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        match self.registry.register(key, Kind::Gauge) {
            Some(AnySeries::Gauge(series)) => Gauge::from_arc(series),
            _ => Gauge::noop(),
        }
    }

    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        match self.registry.register(key, Kind::Histogram) {
            Some(AnySeries::Histogram(series)) => Histogram::from_arc(series),
            _ => Histogram::noop(),
        }
    }
}
