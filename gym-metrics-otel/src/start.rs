//! Turning the builder's settings into a running pipeline: exporter,
//! periodic reader and meter provider ([`crate::OtelBuilder::build`] calls
//! [`meter_provider`]).

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use gym_metrics_api::backend::Instrument as Catalogued;
use gym_metrics_kit::env::TlsEnv;
use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry_otlp::tonic_types::metadata::MetadataMap;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{
    Instrument, MeterProviderBuilder, PeriodicReader, SdkMeterProvider, Stream,
};
use opentelemetry_sdk::Resource;

use crate::collector_url::{self, CollectorUrl};
use crate::console_exporter::ConsoleExporter;
use crate::console_writer::ConsoleWriter;
use crate::export_log::LoggedExporter;
use crate::grpc_runtime::{GrpcRuntime, OnRuntime};
use crate::{
    BuildError, ConfigError, HistogramAggregation, MetricsExporter, OtlpProtocol,
    TemporalityPreference,
};

/// Where and how the periodic reader exports.
pub(crate) struct Export<'a> {
    pub(crate) exporter: MetricsExporter,
    pub(crate) protocol: OtlpProtocol,
    pub(crate) endpoint: Option<&'a CollectorUrl>,
    pub(crate) headers: &'a [(String, String)],
    /// The OTLP exporter's timeout: one request, and its retries' deadline.
    pub(crate) timeout: Duration,
    pub(crate) interval: Duration,
    pub(crate) temporality: TemporalityPreference,
    pub(crate) console_writer: Option<ConsoleWriter>,
    /// CA bundle, client identity, gRPC `insecure` (issue 17).
    pub(crate) tls: &'a TlsEnv,
}

/// A meter provider with `resource`, the histogram aggregation, the views
/// `views` adds (the `metrics` bridge's cardinality limit), and a periodic
/// reader exporting as `export` says (none for exporter `none`).
pub(crate) fn meter_provider(
    resource: Resource,
    aggregation: HistogramAggregation,
    export: Export<'_>,
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
    export: Export<'_>,
) -> Result<MeterProviderBuilder, BuildError> {
    let temporality = export.temporality.sdk();
    let interval = export.interval;
    Ok(match (export.exporter, export.protocol) {
        (MetricsExporter::None, _) => provider,
        (MetricsExporter::Console, _) => {
            let writer = export.console_writer.unwrap_or_else(ConsoleWriter::stdout);
            let exporter = ConsoleExporter::new(writer, temporality);
            provider.with_reader(reader(exporter, "the console", interval))
        }
        (MetricsExporter::Otlp, OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson) => {
            let url = collector_url::resolve(export.endpoint, export.protocol)?;
            let headers: HashMap<String, String> = header_map(export.headers)?
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            let encoding = match export.protocol {
                OtlpProtocol::HttpJson => Protocol::HttpJson,
                _ => Protocol::HttpBinary,
            };
            let builder = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_protocol(encoding)
                .with_endpoint(url.clone())
                .with_timeout(export.timeout)
                .with_headers(headers)
                .with_temporality(temporality);
            let exporter = http_transport(builder, export.tls, &url, export.timeout)?.build()?;
            provider.with_reader(reader(exporter, &url, interval))
        }
        (MetricsExporter::Otlp, OtlpProtocol::Grpc) => {
            let url = collector_url::resolve(export.endpoint, export.protocol)?;
            let url = collector_url::grpc_url(&url, export.tls.insecure)?;
            let metadata = MetadataMap::from_headers(header_map(export.headers)?);
            let runtime = GrpcRuntime::start().map_err(BuildError::Runtime)?;
            let exporter = {
                // tonic's lazy channel spawns its worker on the current runtime.
                let _entered = runtime.handle().enter();
                let builder = opentelemetry_otlp::MetricExporter::builder()
                    .with_tonic()
                    .with_protocol(Protocol::Grpc)
                    .with_endpoint(url.clone())
                    .with_timeout(export.timeout)
                    .with_metadata(metadata)
                    .with_temporality(temporality);
                grpc_transport(builder, export.tls, &url)?.build()?
            };
            provider.with_reader(reader(OnRuntime::new(exporter, runtime), &url, interval))
        }
    })
}

/// OTLP/HTTP's client: ours, following no redirect (see
/// [`crate::http_client`]), on rustls with the TLS files loaded and checked
/// (also for `http://`: reqwest is built without a crypto provider of its
/// own).
#[cfg(feature = "tls")]
fn http_transport<B: WithHttpConfig>(
    builder: B,
    tls: &TlsEnv,
    url: &str,
    timeout: Duration,
) -> Result<B, BuildError> {
    let client =
        crate::tls::ClientTls::load(tls)?.http_client(collector_url::is_https(url), timeout)?;
    Ok(builder.with_http_client(client))
}

/// Without the `tls` feature: our plain client, following no redirect (see
/// [`crate::http_client`]), and no TLS file.
#[cfg(not(feature = "tls"))]
fn http_transport<B: WithHttpConfig>(
    builder: B,
    tls: &TlsEnv,
    _url: &str,
    timeout: Duration,
) -> Result<B, BuildError> {
    reject_without_tls(tls)?;
    Ok(builder.with_http_client(crate::http_client::build(timeout, |b| b)?))
}

/// gRPC's TLS: the files loaded and checked, and tonic's TLS configuration
/// for an `https` endpoint.
#[cfg(feature = "tls")]
fn grpc_transport<B: WithTonicConfig>(
    builder: B,
    tls: &TlsEnv,
    url: &str,
) -> Result<B, BuildError> {
    let tls = crate::tls::ClientTls::load(tls)?;
    Ok(if collector_url::is_https(url) {
        builder.with_tls_config(tls.grpc_config())
    } else {
        builder
    })
}

/// Without the `tls` feature: plaintext only, and no TLS file.
#[cfg(not(feature = "tls"))]
fn grpc_transport<B: WithTonicConfig>(
    builder: B,
    tls: &TlsEnv,
    _url: &str,
) -> Result<B, BuildError> {
    reject_without_tls(tls)?;
    Ok(builder)
}

/// In a build without the `tls` feature: an error naming the first TLS
/// file setting given, which such a build cannot honour.
#[cfg(not(feature = "tls"))]
fn reject_without_tls(tls: &TlsEnv) -> Result<(), ConfigError> {
    match tls.files().next() {
        None => Ok(()),
        Some(file) => Err(ConfigError::invalid(
            file.source,
            file.shown(),
            "no TLS file in this build: gym-metrics-otel was built without its `tls` feature; \
             enable it (it is on by default) or unset the variable",
        )),
    }
}

fn reader<E: PushMetricExporter>(
    exporter: E,
    destination: &str,
    interval: Duration,
) -> PeriodicReader<LoggedExporter<E>> {
    PeriodicReader::builder(LoggedExporter::new(exporter, destination))
        .with_interval(interval)
        .build()
}

/// The headers, validated as HTTP header names and values.
fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, ConfigError> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let invalid = || {
            ConfigError::invalid(
                "headers (OTEL_EXPORTER_OTLP_[METRICS_]HEADERS)",
                format!("{k}={v}"),
                "header names of letters, digits and dashes, and values of visible ASCII",
            )
        };
        let name = HeaderName::from_str(k).map_err(|_| invalid())?;
        let value = HeaderValue::from_str(v).map_err(|_| invalid())?;
        map.insert(name, value);
    }
    Ok(map)
}
