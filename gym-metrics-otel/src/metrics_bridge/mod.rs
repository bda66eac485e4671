//! The `metrics` facade bridged into the OpenTelemetry pipeline (feature
//! `metrics-facade`): a `metrics::Recorder` whose handles hold an SDK
//! instrument of the scope `metrics` (on the backend's own meter provider)
//! and their series' attributes, built once, so a handle registered once
//! records with no lookup of ours. Which names are exported is the API's one
//! rule for both backends ([`gym_metrics_kit::bridge::FamilyNames`]):
//! a name whose Prometheus family would meet a gym family, or a bridged
//! family of another kind, is refused (logged once, counted in
//! [`MetricsBridgeStats`]), as is a name that is no OpenTelemetry instrument
//! name. Each instrument holds at most the cardinality limit's label sets;
//! further ones share one `otel.metric.overflow=true` series. Histograms get
//! the bounds of the first matching rule of
//! [`gym_metrics_kit::bridge::MetricsBridgeOptions`], else its documented
//! default (the OpenTelemetry SDK's), and units the UCUM unit of
//! [`gym_metrics_kit::bridge::ucum_unit`]: the same buckets, limit
//! and units as the Prometheus path.

mod instrument_name;
mod recorder;
mod registry;
mod series;

use std::sync::Arc;

use gym_metrics_kit::bridge::MetricsBridgeOptions;
use opentelemetry::metrics::MeterProvider;
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::{Instrument, SdkMeterProvider, Stream};

pub use recorder::{MetricsBridgeRecorder, MetricsBridgeStats};
use registry::Registry;

use crate::{BuildError, OtelGuard};

/// The instrumentation scope of every bridged instrument (the Prometheus
/// path labels its bridged series `otel_scope_name="metrics"`).
pub(crate) const BRIDGE_SCOPE: &str = "metrics";

/// A bridge configured by `options`, making its instruments on `provider`.
pub(crate) fn attach(
    options: MetricsBridgeOptions,
    provider: &SdkMeterProvider,
) -> MetricsBridgeRecorder {
    let meter = provider.meter_with_scope(InstrumentationScope::builder(BRIDGE_SCOPE).build());
    MetricsBridgeRecorder::new(Arc::new(Registry::new(options, meter)))
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

/// Installs `guard`'s bridge, if it has one, as the process's `metrics` recorder.
pub(crate) fn install_global(guard: &OtelGuard) -> Result<(), BuildError> {
    match guard.metrics_recorder() {
        Some(recorder) => {
            metrics::set_global_recorder(recorder).map_err(|_| BuildError::MetricsRecorderTaken)
        }
        None => Ok(()),
    }
}
