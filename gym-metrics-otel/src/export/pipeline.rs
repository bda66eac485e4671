//! Turning the builder's settings into a running pipeline: the meter
//! provider, and its periodic reader exporting through the
//! [`RequestExporter`] to the console or a collector
//! ([`crate::OtelBuilder::build`] calls [`meter_provider`]).

use std::sync::Arc;
use std::time::Duration;

use opentelemetry_sdk::metrics::{MeterProviderBuilder, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::Resource;

use crate::export::console_writer::ConsoleWriter;
use crate::export::export_log::LoggedExporter;
use crate::export::gym_encoding::GymEncoding;
use crate::export::request_exporter::{Destination, RequestExporter};
use crate::{BuildError, TemporalityPreference};

/// Where and how the periodic reader exports.
pub(crate) struct Export {
    pub(crate) sink: Sink,
    pub(crate) interval: Duration,
    pub(crate) temporality: TemporalityPreference,
    /// The gym instruments, encoded into every export.
    pub(crate) gym: Arc<GymEncoding>,
}

/// What the periodic reader exports to.
pub(crate) enum Sink {
    /// Nothing: no reader (exporter `none`).
    None,
    /// OTLP/JSON lines on the writer (default: standard output).
    Console(Option<ConsoleWriter>),
    /// A collector, over a transport this build contains.
    #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
    Otlp(Box<crate::export::otlp::Otlp>),
}

/// A meter provider with `resource`, the views `views` adds (the `metrics`
/// bridge's cardinality limit), and a periodic reader exporting as `export`
/// says (none for exporter `none`).
pub(crate) fn meter_provider(
    resource: Resource,
    export: Export,
    views: impl FnOnce(MeterProviderBuilder) -> MeterProviderBuilder,
) -> Result<SdkMeterProvider, BuildError> {
    let provider = views(SdkMeterProvider::builder().with_resource(resource));
    let (destination, name) = match export.sink {
        Sink::None => return Ok(provider.build()),
        Sink::Console(writer) => (
            Destination::Console(writer.unwrap_or_else(ConsoleWriter::stdout)),
            "the console".to_string(),
        ),
        #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
        Sink::Otlp(otlp) => {
            let (sender, url) = crate::export::otlp::sender(*otlp)?;
            (Destination::Otlp(Box::new(sender)), url)
        }
    };
    let exporter = RequestExporter::new(destination, export.gym, export.temporality.sdk());
    let reader = PeriodicReader::builder(LoggedExporter::new(exporter, &name))
        .with_interval(export.interval)
        .build();
    Ok(provider.with_reader(reader).build())
}

/// `provider`'s `gym-metrics` meter (our scope and version): the SDK
/// instruments of ours (the verify counters and rate, process and memory
/// gauges) live on it, and the gym instruments join its scope.
pub(crate) fn gym_meter(provider: &SdkMeterProvider) -> opentelemetry::metrics::Meter {
    use opentelemetry::metrics::MeterProvider as _;
    let scope = opentelemetry::InstrumentationScope::builder(gym_metrics_kit::SCOPE_NAME)
        .with_version(gym_metrics_kit::SCOPE_VERSION)
        .build();
    provider.meter_with_scope(scope)
}
