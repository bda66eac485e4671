//! The collector URL: exact (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, the
//! builder) or a base that gets `/v1/metrics` appended for http/protobuf
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`).

use std::fmt;

use gym_metrics_api::backend::redact_userinfo;

use crate::{ConfigError, OtlpProtocol};

/// How an endpoint was given. `Debug` redacts the URL's user-info.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// Used as is.
    Exact {
        /// Where it came from, for error messages.
        source: &'static str,
        /// The URL.
        url: String,
    },
    /// A base URL: `/v1/metrics` is appended for http/protobuf, gRPC uses it as is.
    Base {
        /// Where it came from, for error messages.
        source: &'static str,
        /// The URL.
        url: String,
    },
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, source, url) = match self {
            Endpoint::Exact { source, url } => ("Exact", source, url),
            Endpoint::Base { source, url } => ("Base", source, url),
        };
        f.debug_struct(kind)
            .field("source", source)
            .field("url", &redact_userinfo(url))
            .finish()
    }
}

/// The URL to export to, validated: `http://host[:port][/path]`.
///
/// # Errors
/// An empty host, a scheme other than `http`, or `https` (this backend is
/// built without a TLS stack), naming where the value came from.
pub(crate) fn resolve(
    endpoint: Option<&Endpoint>,
    protocol: OtlpProtocol,
) -> Result<String, ConfigError> {
    let (source, url) = match endpoint {
        None => return Ok(protocol.default_endpoint().to_string()),
        Some(Endpoint::Exact { source, url }) => (*source, url.trim().to_string()),
        Some(Endpoint::Base { source, url }) => {
            let base = url.trim().trim_end_matches('/');
            let url = match protocol {
                OtlpProtocol::HttpProtobuf => format!("{base}/v1/metrics"),
                OtlpProtocol::Grpc => base.to_string(),
            };
            (*source, url)
        }
    };
    validate(source, &url)?;
    Ok(url)
}

fn validate(source: &'static str, url: &str) -> Result<(), ConfigError> {
    if url.to_ascii_lowercase().starts_with("https://") {
        return Err(ConfigError::invalid(
            source,
            url,
            "an http:// URL: this backend is built without TLS; export to a local collector or sidecar over http",
        ));
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(ConfigError::invalid(
            source,
            url,
            "an http:// URL such as http://localhost:4318/v1/metrics",
        ));
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return Err(ConfigError::invalid(
            source,
            url,
            "an http:// URL with a host, such as http://localhost:4318/v1/metrics",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(url: &str) -> Endpoint {
        Endpoint::Base {
            source: "OTEL_EXPORTER_OTLP_ENDPOINT",
            url: url.into(),
        }
    }

    #[test]
    fn base_gets_the_signal_path_for_http_only() {
        let b = base("http://c:4318/");
        assert_eq!(
            resolve(Some(&b), OtlpProtocol::HttpProtobuf).unwrap(),
            "http://c:4318/v1/metrics"
        );
        assert_eq!(
            resolve(Some(&b), OtlpProtocol::Grpc).unwrap(),
            "http://c:4318"
        );
    }

    #[test]
    fn defaults_follow_the_protocol() {
        assert_eq!(
            resolve(None, OtlpProtocol::HttpProtobuf).unwrap(),
            "http://localhost:4318/v1/metrics"
        );
    }

    #[test]
    fn rejects_https_and_garbage_naming_the_source() {
        for bad in ["https://c:4318", "c:4318", "http://", "http:// x"] {
            let e = resolve(Some(&base(bad)), OtlpProtocol::Grpc).unwrap_err();
            assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_ENDPOINT", "{bad}");
        }
    }
}
