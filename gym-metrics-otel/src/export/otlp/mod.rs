//! OTLP export over the transports this build contains, one module each:
//! `http_exporter` (features `http-proto` and `http-json`) and
//! `grpc_exporter` (feature `grpc`). The whole module exists only when at
//! least one is on.

use std::str::FromStr;
use std::time::Duration;

use gym_metrics_kit::env::TlsEnv;
use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;

use crate::settings::collector_url::{self, CollectorUrl};
use crate::settings::exporter_env::{header_problem, Compression};
use crate::settings::protocol::Transport;
use crate::{BuildError, ConfigError};

#[cfg(feature = "grpc")]
mod grpc_exporter;
#[cfg(feature = "grpc")]
mod grpc_runtime;
#[cfg(any(feature = "http-proto", feature = "http-json"))]
pub(crate) mod http_client;
#[cfg(any(feature = "http-proto", feature = "http-json"))]
mod http_exporter;
mod retry;

/// Where and how OTLP exports go.
pub(crate) struct Otlp {
    /// The transport, built in (the builder resolved the protocol).
    pub(crate) transport: Transport,
    pub(crate) endpoint: Option<CollectorUrl>,
    pub(crate) headers: Vec<(String, String)>,
    /// The OTLP exporter's timeout: one whole export, its retries included.
    pub(crate) timeout: Duration,
    /// The request bodies' compression
    /// (`OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION`).
    pub(crate) compression: Compression,
    /// CA bundle, client identity, gRPC `insecure` (issue 17).
    pub(crate) tls: TlsEnv,
}

/// Sends export requests to the collector over one transport.
#[derive(Debug)]
pub(crate) enum Sender {
    /// OTLP/HTTP, protobuf or JSON bodies.
    #[cfg(any(feature = "http-proto", feature = "http-json"))]
    Http(http_exporter::HttpSender),
    /// OTLP/gRPC.
    #[cfg(feature = "grpc")]
    Grpc(grpc_exporter::GrpcSender),
}

impl Sender {
    /// Sends `request`; the collector's partial success as it answered it,
    /// empty or not (rejected data
    /// points and its message), if it reported one.
    pub(crate) fn send(
        &self,
        request: ExportMetricsServiceRequest,
    ) -> Result<Option<(i64, String)>, String> {
        match self {
            #[cfg(any(feature = "http-proto", feature = "http-json"))]
            Sender::Http(http) => http.send(&request),
            #[cfg(feature = "grpc")]
            Sender::Grpc(grpc) => grpc.send(request),
        }
    }
}

/// The sender `otlp` says, and the URL it sends to (for log lines).
pub(crate) fn sender(otlp: Otlp) -> Result<(Sender, String), BuildError> {
    let url = collector_url::resolve(otlp.endpoint.as_ref(), otlp.transport.protocol())?;
    let headers = header_map(&otlp.headers)?;
    Ok(match otlp.transport {
        #[cfg(feature = "http-proto")]
        Transport::HttpProtobuf => {
            let sender = http_exporter::HttpSender::new(false, &url, headers, &otlp)?;
            (Sender::Http(sender), url)
        }
        #[cfg(feature = "http-json")]
        Transport::HttpJson => {
            let sender = http_exporter::HttpSender::new(true, &url, headers, &otlp)?;
            (Sender::Http(sender), url)
        }
        #[cfg(feature = "grpc")]
        Transport::Grpc => {
            let url = collector_url::grpc_url(&url, otlp.tls.insecure)?;
            let sender = grpc_exporter::GrpcSender::new(&url, headers, &otlp)?;
            (Sender::Grpc(sender), url)
        }
    })
}

/// The headers, validated as HTTP header names and values (of at most
/// [`crate::settings::exporter_env::MAX_HEADER_VALUE`] bytes).
fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, ConfigError> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let invalid = |expected: &'static str| {
            ConfigError::invalid(
                "headers (OTEL_EXPORTER_OTLP_[METRICS_]HEADERS)",
                format!("{k}={v}"),
                expected,
            )
        };
        if let Some(expected) = header_problem(k, v) {
            return Err(invalid(expected));
        }
        let invalid = || invalid(crate::settings::exporter_env::HEADERS_EXPECTED);
        let name = HeaderName::from_str(k).map_err(|_| invalid())?;
        let value = HeaderValue::from_str(v).map_err(|_| invalid())?;
        map.insert(name, value);
    }
    Ok(map)
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
