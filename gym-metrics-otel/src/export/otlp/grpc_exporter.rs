//! OTLP/gRPC (feature `grpc`): the protocol's own tonic client on a channel
//! we build ourselves, inside the runtime of our own thread
//! ([`super::grpc_runtime`]), with or without TLS.
//!
//! The channel is ours because TLS for it comes from tonic's own features:
//! `tls` turns them on for tonic only when `grpc` is on, so that an
//! http-only build with TLS pulls no tonic.
//!
//! Requests are gzipped when asked (tonic's `gzip` feature, on with `grpc`),
//! and retryable answers retried by [`super::retry`] within the export
//! timeout.

use std::time::Duration;

use gym_metrics_kit::redact::redact_urls;
use http::HeaderMap;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_client::MetricsServiceClient;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use tonic::codec::CompressionEncoding;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Endpoint};

use super::grpc_runtime::GrpcRuntime;
use super::retry::{self, Attempt};
use super::Otlp;
use crate::settings::exporter_env::Compression;
use crate::BuildError;

/// Sends export requests over one gRPC channel, driven by a runtime thread
/// of its own (which lives as long as the sender).
#[derive(Debug)]
pub(crate) struct GrpcSender {
    client: MetricsServiceClient<Channel>,
    metadata: MetadataMap,
    /// The whole export's timeout, retries included.
    timeout: Duration,
    runtime: GrpcRuntime,
}

impl GrpcSender {
    /// A sender to `url` (which has its scheme) with `headers` as metadata.
    pub(super) fn new(url: &str, headers: HeaderMap, otlp: &Otlp) -> Result<Self, BuildError> {
        let endpoint = endpoint(url, otlp)?.timeout(otlp.timeout);
        let runtime = GrpcRuntime::start().map_err(BuildError::Runtime)?;
        let client = {
            // tonic's lazy channel spawns its worker on the current runtime.
            let _entered = runtime.handle().enter();
            let client = MetricsServiceClient::new(endpoint.connect_lazy());
            match otlp.compression {
                Compression::None => client,
                Compression::Gzip => client.send_compressed(CompressionEncoding::Gzip),
            }
        };
        Ok(Self {
            client,
            metadata: MetadataMap::from_headers(headers),
            timeout: otlp.timeout,
            runtime,
        })
    }

    /// Sends `request`, retrying a retryable answer within the timeout; the
    /// collector's partial success, if any. Called on the SDK's reader
    /// thread, which is in no runtime, so blocking on the handle is allowed
    /// while the runtime's own thread drives the IO.
    pub(crate) fn send(
        &self,
        request: ExportMetricsServiceRequest,
    ) -> Result<Option<(i64, String)>, String> {
        retry::run(self.timeout, |left| self.attempt(request.clone(), left))
    }

    /// One call, given `left` of the export's timeout (as its gRPC deadline,
    /// and as a limit on the wait for its answer).
    fn attempt(
        &self,
        request: ExportMetricsServiceRequest,
        left: Duration,
    ) -> Attempt<Option<(i64, String)>> {
        let mut request = tonic::Request::new(request);
        *request.metadata_mut() = self.metadata.clone();
        request.set_timeout(left);
        let mut client = self.client.clone();
        let answer = self
            .runtime
            .handle()
            .block_on(async move { tokio::time::timeout(left, client.export(request)).await });
        let status = match answer {
            Ok(Ok(response)) => {
                return Attempt::Accepted(
                    response
                        .into_inner()
                        .partial_success
                        .map(|p| (p.rejected_data_points, p.error_message)),
                );
            }
            Ok(Err(status)) => status,
            Err(_) => {
                return Attempt::Failed(format!(
                    "the collector did not answer within {} ms",
                    left.as_millis()
                ));
            }
        };
        let error = format!(
            "the collector answered {:?}: {}",
            status.code(),
            status.message()
        );
        match retry::grpc_retryable(&status) {
            Some(server_delay) => Attempt::Retryable {
                error,
                server_delay,
            },
            None => Attempt::Failed(error),
        }
    }
}

/// The channel's endpoint, with TLS for an `https` URL: the TLS files are
/// loaded and checked first, for every URL.
#[cfg(feature = "tls")]
fn endpoint(url: &str, otlp: &Otlp) -> Result<Endpoint, BuildError> {
    let tls = crate::export::tls::ClientTls::load(&otlp.tls)?;
    let endpoint = parse(url)?;
    if !crate::settings::collector_url::is_https(url) {
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
