//! Turning the builder's settings into a running pipeline: exporter,
//! periodic reader and meter provider ([`crate::OtelBuilder::build`] calls
//! [`meter_provider`]).

use std::time::Duration;

use gym_metrics_api::backend::Instrument as Catalogued;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{
    Instrument, MeterProviderBuilder, PeriodicReader, SdkMeterProvider, Stream,
};
use opentelemetry_sdk::Resource;

use crate::console_exporter::ConsoleExporter;
use crate::console_writer::ConsoleWriter;
use crate::export_log::LoggedExporter;
use crate::{BuildError, HistogramAggregation, TemporalityPreference};

/// Where and how the periodic reader exports.
pub(crate) struct Export {
    pub(crate) sink: Sink,
    pub(crate) interval: Duration,
    pub(crate) temporality: TemporalityPreference,
}

/// What the periodic reader exports to.
pub(crate) enum Sink {
    /// Nothing: no reader (exporter `none`).
    None,
    /// OTLP/JSON lines on the writer (default: standard output).
    Console(Option<ConsoleWriter>),
    /// A collector, over a transport this build contains.
    #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
    Otlp(Box<crate::otlp::Otlp>),
}

/// A meter provider with `resource`, the histogram aggregation, the views
/// `views` adds (the `metrics` bridge's cardinality limit), and a periodic
/// reader exporting as `export` says (none for exporter `none`).
pub(crate) fn meter_provider(
    resource: Resource,
    aggregation: HistogramAggregation,
    export: Export,
    views: impl FnOnce(MeterProviderBuilder) -> MeterProviderBuilder,
) -> Result<SdkMeterProvider, BuildError> {
    let mut provider = views(SdkMeterProvider::builder().with_resource(resource));
    if let Some(aggregation) = aggregation.sdk_override() {
        provider = provider.with_view(move |i: &Instrument| {
            let ours = [
                Catalogued::ROLLOUT_DURATION.name,
                Catalogued::VERIFY_DURATION.name,
            ];
            if !ours.contains(&i.name()) {
                return None;
            }
            Stream::builder()
                .with_aggregation(aggregation.clone())
                .build()
                .ok()
        });
    }
    Ok(add_reader(provider, export)?.build())
}

fn add_reader(
    provider: MeterProviderBuilder,
    export: Export,
) -> Result<MeterProviderBuilder, BuildError> {
    let temporality = export.temporality.sdk();
    let interval = export.interval;
    Ok(match export.sink {
        Sink::None => provider,
        Sink::Console(writer) => {
            let writer = writer.unwrap_or_else(ConsoleWriter::stdout);
            let exporter = ConsoleExporter::new(writer, temporality);
            provider.with_reader(reader(exporter, "the console", interval))
        }
        #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
        Sink::Otlp(otlp) => crate::otlp::add_reader(provider, *otlp, temporality, interval)?,
    })
}

/// A periodic reader exporting through `exporter` every `interval`, its
/// failures logged naming `destination`.
pub(crate) fn reader<E: PushMetricExporter>(
    exporter: E,
    destination: &str,
    interval: Duration,
) -> PeriodicReader<LoggedExporter<E>> {
    PeriodicReader::builder(LoggedExporter::new(exporter, destination))
        .with_interval(interval)
        .build()
}
