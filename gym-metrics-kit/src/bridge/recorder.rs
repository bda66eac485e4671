//! The `metrics::Recorder` both backends install (or hand out): every
//! `describe_*` and `register_*` goes to the kit's [`Instruments`].

use std::fmt;
use std::sync::Arc;

use gym_metrics_api::backend::InstrumentKind as Kind;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, SharedString, Unit};

use super::instruments::Instruments;
use super::storage::{Series, Storage};

/// The `metrics` crate bridged into a backend's [`Storage`]: `counter!`,
/// `gauge!` and `histogram!` from the application and its dependencies
/// become the backend's series. Each backend names its own
/// (`gym_metrics_prom::MetricsBridgeRecorder`,
/// `gym_metrics_otel::MetricsBridgeRecorder`). Example at [`Storage`].
pub struct MetricsBridgeRecorder<S: Storage> {
    registry: Arc<Instruments<S>>,
}

/// What the bridge refused, folded or dropped so far (each cause also
/// logged once).
///
/// ```
/// let stats = gym_metrics_kit::bridge::MetricsBridgeStats::default();
/// assert_eq!(stats.overflowed + stats.refused + stats.dropped, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MetricsBridgeStats {
    /// Registrations of a label set recorded into its instrument's overflow
    /// series (`otel.metric.overflow=true`, `otel_metric_overflow="true"`
    /// in Prometheus): past the cardinality limit, past the bytes one
    /// series' labels may hold, or past the bytes all series may write
    /// ([`super::MetricsBridgeOptions`]).
    pub overflowed: u64,
    /// `metrics` instruments not exported: a name whose Prometheus family
    /// would meet a gym family or a bridged family of another kind, nothing
    /// of which is left for a name, longer than
    /// [`super::MAX_NAME_BYTES`], past the family limit, or that the backend
    /// cannot hold (on the OpenTelemetry path, no OpenTelemetry instrument
    /// name). Each name is counted once while the bridge remembers it (the
    /// first few thousand names), and at each registration after that.
    pub refused: u64,
    /// Histogram values dropped: negative, NaN or infinite
    /// ([`super::HistogramCell`]).
    pub dropped: u64,
}

impl<S: Storage> MetricsBridgeRecorder<S> {
    /// The recorder of `registry`.
    pub fn new(registry: Arc<Instruments<S>>) -> Self {
        Self { registry }
    }

    /// What was refused or folded into an overflow series so far.
    pub fn stats(&self) -> MetricsBridgeStats {
        self.registry.stats()
    }
}

impl<S: Storage> Clone for MetricsBridgeRecorder<S> {
    fn clone(&self) -> Self {
        Self::new(Arc::clone(&self.registry))
    }
}

impl<S: Storage> fmt::Debug for MetricsBridgeRecorder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsBridgeRecorder")
            .field("registry", &self.registry)
            .finish()
    }
}

impl<S: Storage> metrics::Recorder for MetricsBridgeRecorder<S> {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.registry
            .describe(key.as_str(), Kind::Counter, unit, &description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.registry
            .describe(key.as_str(), Kind::Gauge, unit, &description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.registry
            .describe(key.as_str(), Kind::Histogram, unit, &description);
    }

    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        match self.registry.register(key, Kind::Counter) {
            Some(Series::Counter(series)) => Counter::from_arc(series),
            _ => Counter::noop(),
        }
    }

    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        match self.registry.register(key, Kind::Gauge) {
            Some(Series::Gauge(series)) => Gauge::from_arc(series),
            _ => Gauge::noop(),
        }
    }

    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        match self.registry.register(key, Kind::Histogram) {
            Some(Series::Histogram(series)) => Histogram::from_arc(series),
            _ => Histogram::noop(),
        }
    }
}

/// Another `metrics` recorder is set in this process already (the
/// gym-metrics recorder was installed all the same).
///
/// ```
/// let e = gym_metrics_kit::bridge::MetricsRecorderTaken;
/// assert!(e.to_string().contains("with_metrics_bridge()"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("another `metrics` recorder is already installed in this process: drop with_metrics_bridge() or the other recorder (e.g. metrics-exporter-prometheus); install one, once, at start-up")]
pub struct MetricsRecorderTaken;

/// The install's last step with the bridge: it becomes the process's
/// `metrics` recorder.
impl<S: Storage, E: From<MetricsRecorderTaken>> crate::install::ThenInstall<E>
    for MetricsBridgeRecorder<S>
{
    fn then_install(self) -> Result<(), E> {
        metrics::set_global_recorder(self).map_err(|_| MetricsRecorderTaken.into())
    }
}
