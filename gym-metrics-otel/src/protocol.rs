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
    /// OTLP/gRPC. The backend drives it from a thread of its own.
    Grpc,
}

impl OtlpProtocol {
    /// Parses `http/protobuf` or `grpc`; `variable` names the source in the error.
    ///
    /// # Errors
    /// Any other value (including `http/json`, which this backend does not
    /// speak), naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json").is_err());
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
            "grpc" => Ok(OtlpProtocol::Grpc),
            _ => Err(ConfigError::invalid(
                variable,
                value,
                "http/protobuf or grpc (http/json is not supported)",
            )),
        }
    }

    /// The endpoint used when none is configured.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::Grpc.default_endpoint(), "http://localhost:4317");
    /// ```
    pub fn default_endpoint(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf => "http://localhost:4318/v1/metrics",
            OtlpProtocol::Grpc => "http://localhost:4317",
        }
    }
}
