//! The peer libraries' histograms, each built with the catalogue's bucket
//! boundaries and no labels, as a user would register them.

use std::time::Duration;

use gym_metrics_api::backend::Instrument;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};

/// The catalogue's boundaries, milliseconds.
pub fn bounds() -> Vec<f64> {
    Instrument::DEFAULT_DURATION_BOUNDARIES_MS.to_vec()
}

/// `prometheus` 0.14: a registered-once `Histogram`.
///
/// # Panics
/// Never with these constant options (benchmark set-up).
#[allow(clippy::unwrap_used)]
pub fn prometheus_histogram() -> prometheus::Histogram {
    prometheus::Histogram::with_opts(
        prometheus::HistogramOpts::new("gym_rollout_duration_ms", "rollout").buckets(bounds()),
    )
    .unwrap()
}

/// `prometheus-client` 0.26: a classic `Histogram`.
pub fn prometheus_client_histogram() -> prometheus_client::metrics::histogram::Histogram {
    prometheus_client::metrics::histogram::Histogram::new(bounds())
}

/// `metrics` 0.24 with `metrics-exporter-prometheus`: a registered handle
/// (the recorder kept alive beside it), with the same buckets.
///
/// # Panics
/// Never with these constant buckets (benchmark set-up).
#[allow(clippy::unwrap_used)]
pub fn metrics_histogram() -> (
    metrics_exporter_prometheus::PrometheusRecorder,
    metrics::Histogram,
) {
    use metrics::Recorder as _;
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
        .set_buckets(&bounds())
        .unwrap()
        .build_recorder();
    let metadata = metrics::Metadata::new(module_path!(), metrics::Level::INFO, None);
    let handle = recorder.register_histogram(
        &metrics::Key::from_static_name("gym_rollout_duration_ms"),
        &metadata,
    );
    (recorder, handle)
}

/// The bare OpenTelemetry SDK 0.33: a meter provider with one periodic
/// reader (cumulative, as our backend's default; an hour's interval, so no
/// export runs while measuring) and an `f64` histogram with the same
/// boundaries. The provider must outlive the histogram's use.
pub fn otel_sdk_histogram() -> (SdkMeterProvider, opentelemetry::metrics::Histogram<f64>) {
    let reader = PeriodicReader::builder(DiscardExporter)
        .with_interval(Duration::from_secs(3600))
        .build();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    let histogram = provider
        .meter("bench")
        .f64_histogram("gym.rollout.duration_ms")
        .with_unit("ms")
        .with_boundaries(bounds())
        .build();
    (provider, histogram)
}

/// An exporter that discards everything: a reader for pipelines whose export
/// is not what is measured.
#[derive(Debug, Default)]
pub struct DiscardExporter;

impl PushMetricExporter for DiscardExporter {
    async fn export(&self, _metrics: &ResourceMetrics) -> OTelSdkResult {
        Ok(())
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}
