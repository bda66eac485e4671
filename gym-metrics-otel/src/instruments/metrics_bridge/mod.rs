//! The `metrics` crate bridged into the OpenTelemetry pipeline (feature
//! `metrics-bridge`): the kit's bridge ([`gym_metrics_kit::bridge`]: the one
//! name rule, series, cardinality limit, bucket rules, recorder) over this
//! storage (`storage.rs`), whose handles hold an SDK instrument of the scope
//! `metrics` (on the backend's own meter provider) and their series'
//! attributes, built once, so a handle registered once records with no
//! lookup of ours. Besides the kit's rule, a name that is no OpenTelemetry
//! instrument name is refused (`instrument_name.rs`); units are the UCUM
//! unit of [`gym_metrics_kit::bridge::ucum_unit`]: the same names, buckets,
//! limit and units as the Prometheus path.

mod instrument_name;
mod series;
mod storage;

use std::sync::Arc;

use gym_metrics_kit::bridge::{Instruments, MetricsBridgeOptions};
use opentelemetry::metrics::MeterProvider;
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::{Instrument, SdkMeterProvider, Stream};

pub use gym_metrics_kit::bridge::MetricsBridgeStats;
use storage::OtelStorage;

/// The `metrics` crate bridged into this backend's pipeline: `counter!`,
/// `gauge!` and `histogram!` from the application and from its dependencies
/// become SDK instruments of the scope `metrics` on the backend's meter
/// provider, so they share the gym instruments' resource, exporter, export
/// interval, temporality and shutdown flush. Installed by
/// [`crate::OtelBuilder::install`] when the builder was given
/// [`crate::OtelBuilder::with_metrics_bridge`]; from `build`, take it from
/// [`crate::OtelGuard::metrics_recorder`] and install it yourself (or use it
/// locally, as here). `stats()` says what was refused or folded.
///
/// ```
/// use gym_metrics_kit::bridge::MetricsBridgeOptions;
/// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
/// let (_recorder, guard) = OtelBuilder::new()
///     .exporter(MetricsExporter::Console)
///     .console_writer(std::io::sink())
///     .with_metrics_bridge(MetricsBridgeOptions::new())
///     .build()?;
/// let bridge = guard.metrics_recorder().expect("asked for");
/// metrics::with_local_recorder(&bridge, || {
///     metrics::describe_counter!("jobs.done", "Jobs finished");
///     metrics::counter!("jobs.done", "queue" => "fast").increment(2);
///     metrics::counter!("gym.verify.completed").increment(1);
/// });
/// assert_eq!(bridge.stats().refused, 1); // a gym instrument's name
/// guard.shutdown()?; // exports jobs.done{queue="fast"} = 2 beside the gym instruments
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type MetricsBridgeRecorder = gym_metrics_kit::bridge::MetricsBridgeRecorder<OtelStorage>;

/// The instrumentation scope of every bridged instrument (the Prometheus
/// path labels its bridged series `otel_scope_name="metrics"`).
pub(crate) const BRIDGE_SCOPE: &str = "metrics";

/// A bridge configured by `options`, making its instruments on `provider`.
pub(crate) fn attach(
    options: MetricsBridgeOptions,
    provider: &SdkMeterProvider,
) -> MetricsBridgeRecorder {
    let meter = provider.meter_with_scope(InstrumentationScope::builder(BRIDGE_SCOPE).build());
    let registry = Instruments::new(options, OtelStorage { meter }, []);
    MetricsBridgeRecorder::new(Arc::new(registry))
}

/// The view giving the bridged instruments the SDK cardinality limit
/// `limit + 1`: the bridge folds label sets past `limit` into its overflow
/// series itself (and counts them), which is one more series to the SDK.
pub(crate) fn cardinality_view(
    limit: usize,
) -> impl Fn(&Instrument) -> Option<Stream> + Send + Sync + 'static {
    let sdk_limit = limit.saturating_add(1).min(usize::MAX - 1);
    move |i: &Instrument| {
        if i.scope().name() != BRIDGE_SCOPE {
            return None;
        }
        Stream::builder()
            .with_cardinality_limit(sdk_limit)
            .build()
            .ok()
    }
}

/// The install's bridge step, refused: another `metrics` recorder is set.
impl From<gym_metrics_kit::bridge::MetricsRecorderTaken> for crate::BuildError {
    fn from(_: gym_metrics_kit::bridge::MetricsRecorderTaken) -> Self {
        Self::MetricsRecorderTaken
    }
}
