//! The collector URL: exact (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, the
//! builder) or a base that gets `/v1/metrics` appended to its path for
//! OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`), before its query.

use std::fmt;

use gym_metrics_kit::redact::{redact_urls, REDACTED};
use url::Url;

use crate::{ConfigError, OtlpProtocol};

/// How the collector's URL was given (the OTLP `endpoint`). `Debug` redacts the URL's user-info and query values.
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
            .field("url", &redact_urls(url))
            .finish()
    }
}

/// The URL to export to, validated: `http://` or `https://`
/// `[user-info@]host[:port][/path][?query]` with a port from 1 to 65535
/// (parsed by the `url` crate, as reqwest parses it), or for gRPC also a
/// bare `host:port`, to which `grpc_url` gives its scheme. A base URL
/// gets `/v1/metrics` appended to its path for OTLP/HTTP, before its query,
/// which is kept (`http://c:4318?k=v` → `http://c:4318/v1/metrics?k=v`).
///
/// # Errors
/// A URL that does not parse (a port out of range, a user name or
/// password with an unescaped `?`, `#` or `/`), an empty host, another
/// scheme, a bare `host:port` for OTLP/HTTP, or `https` in a build without
/// the `tls` feature, naming where the value came from (its secrets
/// redacted).
pub(crate) fn resolve(
    endpoint: Option<&CollectorUrl>,
    protocol: OtlpProtocol,
) -> Result<String, ConfigError> {
    let (source, url, base) = match endpoint {
        None => return Ok(protocol.default_endpoint().to_string()),
        Some(CollectorUrl::Exact { source, url }) => (*source, url.trim(), false),
        Some(CollectorUrl::Base { source, url }) => (*source, url.trim(), true),
    };
    let Some(mut parsed) = validate(source, url, protocol)? else {
        // gRPC's bare `host:port`.
        return Ok(url.to_string());
    };
    if !protocol.is_http() {
        // tonic takes the URL as given (a base is the endpoint itself).
        return Ok(if base {
            url.trim_end_matches('/').to_string()
        } else {
            url.to_string()
        });
    }
    if base {
        let path = format!("{}/v1/metrics", parsed.path().trim_end_matches('/'));
        parsed.set_path(&path);
    }
    Ok(parsed.into())
}

/// A gRPC endpoint with its scheme: a bare `host:port` gets `https://`, or
/// `http://` when `insecure` is set (`OTEL_EXPORTER_OTLP_[METRICS_]INSECURE`,
/// as the specification says: it only governs an endpoint without a
/// scheme); an explicit scheme always wins.
///
/// # Errors
/// The endpoint needs TLS (bare and not insecure) in a build without the
/// `tls` feature.
#[cfg(feature = "grpc")]
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
#[cfg(all(
    feature = "tls",
    any(feature = "grpc", feature = "http-proto", feature = "http-json")
))]
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
            !host.is_empty()
                && !host.contains(['/', ':', ' ', '@', '?', '#'])
                && port.parse::<u16>().is_ok_and(|p| p != 0)
        }
        None => false,
    }
}

/// A URL that does not parse, fit to print: everything between the scheme
/// and its last `@` redacted, since a password with an unescaped `/` (which
/// ends the authority for the kit's rule) is a likely reason it failed.
fn unparsable_shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!(
                "{}{REDACTED}{}",
                &url[..scheme_end + "://".len()],
                &url[at..]
            )
        }
        _ => url.to_string(),
    }
}

/// The parsed URL, or `None` for gRPC's bare `host:port`.
fn validate(
    source: &'static str,
    url: &str,
    protocol: OtlpProtocol,
) -> Result<Option<Url>, ConfigError> {
    let example = if protocol.is_http() {
        "http://localhost:4318/v1/metrics"
    } else {
        "http://localhost:4317"
    };
    match scheme(url) {
        Some("https") if !cfg!(feature = "tls") => {
            return Err(ConfigError::invalid(
                source,
                url,
                format!("an http:// URL such as {example}: {NO_TLS}"),
            ));
        }
        Some(_) => {}
        // gRPC's bare `host:port` (the scheme comes from `insecure`).
        None if !protocol.is_http() && is_host_and_port(url) => return Ok(None),
        None => {
            return Err(ConfigError::invalid(
                source,
                url,
                format!("an http:// or https:// URL such as {example}"),
            ));
        }
    }
    let no_host =
        || ConfigError::invalid(source, url, format!("a URL with a host, such as {example}"));
    // The `url` crate drops tabs and newlines where a client would not.
    if url.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(no_host());
    }
    let parsed = match Url::parse(url) {
        Ok(parsed) => parsed,
        Err(url::ParseError::EmptyHost) => return Err(no_host()),
        Err(e) => {
            return Err(ConfigError::invalid(
                source,
                unparsable_shown(url),
                format!(
                    "a URL such as {example} ({e}): a port from 1 to 65535, and `?`, `#`, `/` \
                     and `@` in a user name or password written %3F, %23, %2F and %40"
                ),
            ))
        }
    };
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(no_host());
    }
    if parsed.port() == Some(0) {
        return Err(ConfigError::invalid(
            source,
            url,
            format!("a URL with a port from 1 to 65535, such as {example}"),
        ));
    }
    Ok(Some(parsed))
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
    fn the_signal_path_goes_before_the_query_which_is_kept() {
        let cases = [
            (
                "http://c:4318?api_key=k",
                "http://c:4318/v1/metrics?api_key=k",
            ),
            ("http://c:4318/?a=1&b=2", "http://c:4318/v1/metrics?a=1&b=2"),
            (
                "http://c:4318/otlp/?a=1",
                "http://c:4318/otlp/v1/metrics?a=1",
            ),
            ("http://c:4318/otlp", "http://c:4318/otlp/v1/metrics"),
        ];
        for (given, want) in cases {
            let got = resolve(Some(&base(given)), OtlpProtocol::HttpJson).unwrap();
            assert_eq!(got, want, "{given}");
        }
        let exact = CollectorUrl::Exact {
            source: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            url: "http://c:4318/v1/metrics?api_key=k".into(),
        };
        assert_eq!(
            resolve(Some(&exact), OtlpProtocol::HttpProtobuf).unwrap(),
            "http://c:4318/v1/metrics?api_key=k"
        );
    }

    #[test]
    fn a_port_out_of_range_or_a_raw_question_mark_in_a_password_is_refused() {
        for bad in [
            "http://c:99999",
            "http://c:0",
            "http://c:65536/v1/metrics",
            "http://u:p?w@c:4318",
            "http://u:p#w@c:4318",
            "http://u:p/w@c:4318",
            "c:99999",
            "c:0",
        ] {
            for protocol in [OtlpProtocol::HttpProtobuf, OtlpProtocol::Grpc] {
                let e = resolve(Some(&base(bad)), protocol).unwrap_err();
                assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_ENDPOINT", "{bad}");
                assert!(
                    !e.value().contains("p?w") && !e.value().contains("p#w"),
                    "{e}"
                );
            }
        }
        for good in ["http://c:1", "http://c:65535", "http://u:p%3Fw@c:4318"] {
            assert!(
                resolve(Some(&base(good)), OtlpProtocol::HttpProtobuf).is_ok(),
                "{good}"
            );
        }
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

    #[cfg(feature = "grpc")]
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
    }

    #[cfg(all(
        feature = "tls",
        any(feature = "grpc", feature = "http-proto", feature = "http-json")
    ))]
    #[test]
    fn https_is_told_by_the_scheme() {
        assert!(is_https("HTTPS://c:4318/v1/metrics"));
        assert!(!is_https("http://c:4318/v1/metrics"));
    }
}
