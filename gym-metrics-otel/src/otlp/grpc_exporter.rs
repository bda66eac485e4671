//! OTLP/gRPC (feature `grpc`): tonic's exporter on a channel we build
//! ourselves, inside the runtime of our own thread ([`super::grpc_runtime`]),
//! with or without TLS.
//!
//! The channel is ours, not the exporter's, because TLS for it comes from
//! tonic's own features: `tls` turns them on for tonic only when `grpc` is
//! on, so that an http-only build with TLS pulls no tonic.

use gym_metrics_kit::redact::redact_urls;
use http::HeaderMap;
use opentelemetry_otlp::tonic_types::metadata::MetadataMap;
use opentelemetry_otlp::{MetricExporter, Protocol, WithExportConfig, WithTonicConfig};
use opentelemetry_sdk::metrics::Temporality;
use tonic::transport::Endpoint;

use super::grpc_runtime::{GrpcRuntime, OnRuntime};
use super::Otlp;
use crate::BuildError;

/// The gRPC exporter to `url` (which has its scheme), driven by a runtime
/// thread of its own.
pub(super) fn exporter(
    url: &str,
    headers: HeaderMap,
    otlp: &Otlp,
    temporality: Temporality,
) -> Result<OnRuntime<MetricExporter>, BuildError> {
    let endpoint = endpoint(url, otlp)?.timeout(otlp.timeout);
    let runtime = GrpcRuntime::start().map_err(BuildError::Runtime)?;
    let exporter = {
        // tonic's lazy channel spawns its worker on the current runtime.
        let _entered = runtime.handle().enter();
        MetricExporter::builder()
            .with_tonic()
            .with_protocol(Protocol::Grpc)
            .with_channel(endpoint.connect_lazy())
            // The exporter's timeout must be the channel's.
            .with_timeout(otlp.timeout)
            .with_metadata(MetadataMap::from_headers(headers))
            .with_temporality(temporality)
            .build()?
    };
    Ok(OnRuntime::new(exporter, runtime))
}

/// The channel's endpoint, with TLS for an `https` URL: the TLS files are
/// loaded and checked first, for every URL.
#[cfg(feature = "tls")]
fn endpoint(url: &str, otlp: &Otlp) -> Result<Endpoint, BuildError> {
    let tls = crate::tls::ClientTls::load(&otlp.tls)?;
    let endpoint = parse(url)?;
    if !crate::collector_url::is_https(url) {
        return Ok(endpoint);
    }
    endpoint
        .tls_config(tls.grpc_config())
        .map_err(|e| BuildError::Exporter(format!("tonic rejected the TLS configuration: {e}")))
}

/// Without the `tls` feature: plaintext only (an `https` URL was refused
/// already), and no TLS file.
#[cfg(not(feature = "tls"))]
fn endpoint(url: &str, otlp: &Otlp) -> Result<Endpoint, BuildError> {
    super::reject_without_tls(&otlp.tls)?;
    parse(url)
}

/// `url` as tonic's endpoint.
fn parse(url: &str) -> Result<Endpoint, BuildError> {
    Endpoint::from_shared(url.to_string()).map_err(|e| {
        BuildError::Exporter(redact_urls(&format!("invalid gRPC endpoint {url}: {e}")).into_owned())
    })
}
