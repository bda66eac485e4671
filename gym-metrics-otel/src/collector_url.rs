//! The collector URL: exact (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, the
//! builder) or a base that gets `/v1/metrics` appended for http/protobuf
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`).

use std::fmt;

use gym_metrics_kit::redact::redact_userinfo;

use crate::{ConfigError, OtlpProtocol};

/// How the collector's URL was given (the OTLP `endpoint`). `Debug` redacts the URL's user-info.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum CollectorUrl {
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

impl fmt::Debug for CollectorUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, source, url) = match self {
            CollectorUrl::Exact { source, url } => ("Exact", source, url),
            CollectorUrl::Base { source, url } => ("Base", source, url),
        };
        f.debug_struct(kind)
            .field("source", source)
            .field("url", &redact_userinfo(url))
            .finish()
    }
}

/// The URL to export to, validated: `http://` or `https://`
/// `host[:port][/path]`, or for gRPC also a bare `host:port`, to which
/// [`grpc_url`] gives its scheme.
///
/// # Errors
/// An empty host, another scheme, a bare `host:port` for OTLP/HTTP, or
/// `https` in a build without the `tls` feature, naming where the value
/// came from.
pub(crate) fn resolve(
    endpoint: Option<&CollectorUrl>,
    protocol: OtlpProtocol,
) -> Result<String, ConfigError> {
    let (source, url) = match endpoint {
        None => return Ok(protocol.default_endpoint().to_string()),
        Some(CollectorUrl::Exact { source, url }) => (*source, url.trim().to_string()),
        Some(CollectorUrl::Base { source, url }) => {
            let base = url.trim().trim_end_matches('/');
            let url = if protocol.is_http() {
                format!("{base}/v1/metrics")
            } else {
                base.to_string()
            };
            (*source, url)
        }
    };
    validate(source, &url, protocol)?;
    Ok(url)
}

/// A gRPC endpoint with its scheme: a bare `host:port` gets `https://`, or
/// `http://` when `insecure` is set (`OTEL_EXPORTER_OTLP_[METRICS_]INSECURE`,
/// as the specification says: it only governs an endpoint without a
/// scheme); an explicit scheme always wins.
///
/// # Errors
/// The endpoint needs TLS (bare and not insecure) in a build without the
/// `tls` feature.
pub(crate) fn grpc_url(url: &str, insecure: bool) -> Result<String, ConfigError> {
    if scheme(url).is_some() {
        return Ok(url.to_string());
    }
    if insecure {
        return Ok(format!("http://{url}"));
    }
    if !cfg!(feature = "tls") {
        return Err(ConfigError::invalid(
            "insecure (OTEL_EXPORTER_OTLP_[METRICS_]INSECURE)",
            "false",
            format!(
                "true for the endpoint {url} without a scheme, or an http:// endpoint: {NO_TLS}"
            ),
        ));
    }
    Ok(format!("https://{url}"))
}

/// Whether the (resolved) URL asks for TLS.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) fn is_https(url: &str) -> bool {
    scheme(url) == Some("https")
}

const NO_TLS: &str = "this build has no TLS (gym-metrics-otel's default `tls` feature is off); \
    enable it or export to a local collector or sidecar over http";

fn scheme(url: &str) -> Option<&'static str> {
    let lower = url.to_ascii_lowercase();
    ["http", "https"]
        .into_iter()
        .find(|s| lower.starts_with(&format!("{s}://")))
}

fn is_host_and_port(url: &str) -> bool {
    match url.rsplit_once(':') {
        Some((host, port)) => {
            !host.is_empty() && !host.contains(['/', ':', ' ']) && port.parse::<u16>().is_ok()
        }
        None => false,
    }
}

fn validate(source: &'static str, url: &str, protocol: OtlpProtocol) -> Result<(), ConfigError> {
    let example = if protocol.is_http() {
        "http://localhost:4318/v1/metrics"
    } else {
        "http://localhost:4317"
    };
    let rest = match scheme(url) {
        Some("https") if !cfg!(feature = "tls") => {
            return Err(ConfigError::invalid(
                source,
                url,
                format!("an http:// URL such as {example}: {NO_TLS}"),
            ));
        }
        Some(s) => &url[s.len() + "://".len()..],
        // gRPC's bare `host:port` (the scheme comes from `insecure`).
        None if !protocol.is_http() && is_host_and_port(url) => url,
        None => {
            return Err(ConfigError::invalid(
                source,
                url,
                format!("an http:// or https:// URL such as {example}"),
            ));
        }
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return Err(ConfigError::invalid(
            source,
            url,
            format!("a URL with a host, such as {example}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(url: &str) -> CollectorUrl {
        CollectorUrl::Base {
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
    fn rejects_garbage_naming_the_source() {
        for bad in [
            "ftp://c:4318",
            "http://",
            "http:// x",
            "https://",
            "grpc://c:4317",
        ] {
            let e = resolve(Some(&base(bad)), OtlpProtocol::Grpc).unwrap_err();
            assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_ENDPOINT", "{bad}");
        }
    }

    #[test]
    fn a_bare_host_and_port_is_for_grpc_only() {
        assert_eq!(
            resolve(Some(&base("c:4317")), OtlpProtocol::Grpc).unwrap(),
            "c:4317"
        );
        for protocol in [OtlpProtocol::HttpProtobuf, OtlpProtocol::HttpJson] {
            let e = resolve(Some(&base("c:4318")), protocol).unwrap_err();
            assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_ENDPOINT");
        }
    }

    #[test]
    fn insecure_only_governs_a_bare_grpc_endpoint() {
        assert_eq!(grpc_url("c:4317", true).unwrap(), "http://c:4317");
        assert_eq!(grpc_url("https://c:4317", true).unwrap(), "https://c:4317");
        assert_eq!(grpc_url("http://c:4317", false).unwrap(), "http://c:4317");
        if cfg!(feature = "tls") {
            assert_eq!(grpc_url("c:4317", false).unwrap(), "https://c:4317");
        } else {
            assert!(grpc_url("c:4317", false).is_err());
        }
    }

    #[test]
    fn https_needs_the_tls_feature() {
        let https = resolve(Some(&base("https://c:4318")), OtlpProtocol::HttpJson);
        assert_eq!(https.is_ok(), cfg!(feature = "tls"), "{https:?}");
        assert!(is_https("HTTPS://c:4318/v1/metrics"));
        assert!(!is_https("http://c:4318/v1/metrics"));
    }
}
