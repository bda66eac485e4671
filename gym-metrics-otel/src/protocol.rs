//! The OTLP transport: `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL`.

use crate::ConfigError;

/// The OTLP transport protocol.
///
/// ```
/// use gym_metrics_otel::OtlpProtocol;
/// assert_eq!(OtlpProtocol::default(), OtlpProtocol::HttpProtobuf);
/// assert_eq!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc").unwrap(), OtlpProtocol::Grpc);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OtlpProtocol {
    /// OTLP/HTTP with protobuf bodies (the default). Needs no async runtime.
    #[default]
    HttpProtobuf,
    /// OTLP/HTTP with JSON bodies (the protocol's JSON mapping), for
    /// receivers or proxies that only take JSON. Larger on the wire than
    /// protobuf; otherwise the same as [`OtlpProtocol::HttpProtobuf`].
    HttpJson,
    /// OTLP/gRPC. The backend drives it from a thread of its own.
    Grpc,
}

impl OtlpProtocol {
    /// Parses `http/protobuf`, `http/json` or `grpc` (case-insensitive);
    /// `variable` names the source in the error.
    ///
    /// # Errors
    /// Any other value, naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json").unwrap(), OtlpProtocol::HttpJson);
    /// assert!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "http").is_err());
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
            "http/json" => Ok(OtlpProtocol::HttpJson),
            "grpc" => Ok(OtlpProtocol::Grpc),
            _ => Err(ConfigError::invalid(
                variable,
                value,
                "http/protobuf, http/json or grpc",
            )),
        }
    }

    /// The endpoint used when none is configured.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::Grpc.default_endpoint(), "http://localhost:4317");
    /// assert_eq!(OtlpProtocol::HttpJson.default_endpoint(), "http://localhost:4318/v1/metrics");
    /// ```
    pub fn default_endpoint(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson => {
                "http://localhost:4318/v1/metrics"
            }
            OtlpProtocol::Grpc => "http://localhost:4317",
        }
    }

    /// Whether this is one of the OTLP/HTTP encodings (the endpoint is a
    /// URL with a path; a base endpoint gets `/v1/metrics` appended).
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert!(OtlpProtocol::HttpJson.is_http());
    /// assert!(!OtlpProtocol::Grpc.is_http());
    /// ```
    pub fn is_http(self) -> bool {
        matches!(self, OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson)
    }
}
