//! The `metrics::Recorder` the OpenTelemetry backend installs (or hands
//! out) with the feature `metrics-facade`.

use std::sync::Arc;

use gym_metrics_api::backend::InstrumentKind as Kind;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, SharedString, Unit};

use super::registry::{AnySeries, Registry};

/// The `metrics` facade bridged into this backend's pipeline: `counter!`,
/// `gauge!` and `histogram!` from the application and from its dependencies
/// become SDK instruments of the scope `metrics` on the backend's meter
/// provider, so they share the gym instruments' resource, exporter, export
/// interval, temporality and shutdown flush. Installed by
/// [`crate::OtelBuilder::install`] when the builder was given
/// [`crate::OtelBuilder::with_metrics_facade`]; from `build`, take it from
/// [`crate::OtelGuard::metrics_recorder`] and install it yourself (or use it
/// locally, as here).
///
/// ```
/// use gym_metrics_kit::bridge::MetricsBridgeOptions;
/// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
/// let (_recorder, guard) = OtelBuilder::new()
///     .exporter(MetricsExporter::Console)
///     .console_writer(std::io::sink())
///     .with_metrics_facade(MetricsBridgeOptions::new())
///     .build()?;
/// let bridge = guard.metrics_recorder().expect("asked for");
/// metrics::with_local_recorder(&bridge, || {
///     metrics::describe_counter!("jobs.done", "Jobs finished");
///     metrics::counter!("jobs.done", "queue" => "fast").increment(2);
/// });
/// assert_eq!(bridge.stats(), gym_metrics_otel::MetricsBridgeStats::default());
/// guard.shutdown()?; // exports jobs.done{queue="fast"} = 2 beside the gym instruments
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct MetricsBridgeRecorder {
    registry: Arc<Registry>,
}

/// What the bridge refused or folded so far (each also logged once).
///
/// ```
/// let stats = gym_metrics_otel::MetricsBridgeStats::default();
/// assert_eq!(stats.overflowed + stats.refused, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetricsBridgeStats {
    /// Registrations of a label set past an instrument's cardinality limit,
    /// recorded into its `otel.metric.overflow=true` series.
    pub overflowed: u64,
    /// `metrics` instruments not exported: a name whose Prometheus family
    /// would meet a gym family or a bridged family of another kind (the
    /// same rule as the Prometheus backend's), or that is no OpenTelemetry
    /// instrument name.
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
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (_recorder, guard) = OtelBuilder::new()
    ///     .exporter(MetricsExporter::None)
    ///     .with_metrics_facade(MetricsBridgeOptions::new())
    ///     .build()?;
    /// let bridge = guard.metrics_recorder().expect("asked for");
    /// metrics::with_local_recorder(&bridge, || metrics::counter!("gym.verify.completed").increment(1));
    /// assert_eq!(bridge.stats().refused, 1); // a gym instrument's name
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
