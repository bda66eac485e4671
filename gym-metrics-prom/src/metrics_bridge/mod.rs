//! The `metrics` facade bridged into the Prometheus exposition (feature
//! `metrics-facade`): a `metrics::Recorder` whose handles hold their
//! series' atomics (a counter is one `AtomicU64`, a gauge one holding `f64`
//! bits, a histogram one per bucket and one for the sum), so a handle
//! registered once records with no lookup. Names and labels are translated
//! by OpenTelemetry's Prometheus rules (`naming.rs`); a name that would meet
//! a gym family, or another family of another type, is refused (logged once,
//! counted in [`MetricsBridgeStats`]) rather than written as an exposition
//! Prometheus cannot read. Each instrument holds at most the cardinality
//! limit's label sets; further ones share one `otel_metric_overflow="true"`
//! series. Histograms get the bounds of the first matching rule of
//! [`gym_metrics_kit::bridge::MetricsBridgeOptions`], else its documented
//! default (the OpenTelemetry SDK's).

mod naming;
mod recorder;
mod registry;
mod render;
mod series;

use std::sync::Arc;

use gym_metrics_kit::bridge::MetricsBridgeOptions;

pub use recorder::{MetricsBridgeRecorder, MetricsBridgeStats};
use registry::Registry;

use crate::error::BuildError;
use crate::exposition::gym::GymFamilies;
use crate::exposition::Exposition;

/// `exposition` with a bridge configured by `options` written after the
/// gym families, and the bridge's recorder. The names the bridge refuses are
/// the API's rule over the whole fleet's gym families
/// ([`gym_metrics_kit::bridge::FamilyNames`]), so the same on the
/// OpenTelemetry path and for every role.
pub(crate) fn attach(
    options: MetricsBridgeOptions,
    families: &GymFamilies,
    exposition: Exposition,
) -> (Exposition, MetricsBridgeRecorder) {
    // Every gym family is taken already; this process's others (process
    // metrics, when on) too.
    let ours = families
        .iter()
        .map(|f| (f.family.name.as_str(), f.family.kind.instrument_kind()));
    let registry = Arc::new(Registry::new(options, ours));
    let recorder = MetricsBridgeRecorder::new(Arc::clone(&registry));
    (exposition.with_later(registry), recorder)
}

/// Installs a handle's bridge, if it has one, as the process's `metrics` recorder.
pub(crate) fn install_global(bridge: Option<MetricsBridgeRecorder>) -> Result<(), BuildError> {
    match bridge {
        Some(recorder) => {
            metrics::set_global_recorder(recorder).map_err(|_| BuildError::MetricsRecorderTaken)
        }
        None => Ok(()),
    }
}
