//! The `OTEL_*` variables of the SDK's periodic reader and the OTLP
//! exporter, which only this backend reads, beside the resource variables
//! both backends read (the kit's [`OtelEnv`]), for [`OtelBuilder::from_env`];
//! the TLS variables are the kit's [`TlsEnv`].

use std::time::Duration;

use gym_metrics_kit::env::{
    parse_bool, parse_choice, parse_key_values, parse_millis, parse_millis_at_least, Booleans,
    EnvVars, OtelEnv, TlsEnv,
};

use crate::settings::collector_url::{self, CollectorUrl};
use crate::settings::protocol::ProtocolSetting;
#[cfg(doc)]
use crate::OtelBuilder;

/// The shortest export interval accepted (issue 26): 50 ms, twenty exports
/// a second, two hundred times the default rate and what the fastest of
/// our own tests and benchmarks asks for. Below it a typo (`1` for `1s`)
/// would flood the collector (1 ms made 7,620 exports in 4 s), so it is a
/// start-up error rather than a value clamped in silence.
pub(crate) const MIN_EXPORT_INTERVAL: Duration = Duration::from_millis(50);
/// What an export interval below [`MIN_EXPORT_INTERVAL`] is told.
pub(crate) const EXPORT_INTERVAL_EXPECTED: &str =
    "at least 50 ms between exports (the default is 10000 ms)";
use crate::{
    ConfigError, HistogramAggregation, MetricsExporter, OtlpProtocol, TemporalityPreference,
};

/// Every variable [`OtelBuilder::from_env`] reads.
///
/// ```
/// use std::cell::RefCell;
/// use gym_metrics_otel::{OtelBuilder, ENV_VARIABLES};
/// let asked = RefCell::new(Vec::new());
/// OtelBuilder::from_env_lookup(|name| {
///     asked.borrow_mut().push(name.to_string());
///     None
/// })?;
/// assert!(ENV_VARIABLES.iter().all(|v| asked.borrow().iter().any(|a| a == v)));
/// # Ok::<(), gym_metrics_otel::ConfigError>(())
/// ```
pub const ENV_VARIABLES: [&str; 29] = [
    SDK_DISABLED,
    OtelEnv::SERVICE_NAME,
    OtelEnv::RESOURCE_ATTRIBUTES,
    OtelEnv::SEMCONV_STABILITY_OPT_IN,
    OtelEnv::EXEMPLAR_FILTER,
    METRICS_EXPORTER,
    METRICS_PROTOCOL,
    PROTOCOL,
    METRICS_ENDPOINT,
    ENDPOINT,
    METRICS_HEADERS,
    HEADERS,
    METRICS_TIMEOUT,
    TIMEOUT,
    METRICS_COMPRESSION,
    COMPRESSION,
    METRIC_EXPORT_TIMEOUT,
    EXPORT_INTERVAL,
    TEMPORALITY,
    HISTOGRAM_AGGREGATION,
    SHUTDOWN_TIMEOUT,
    // OTLP over TLS (issue 17).
    TlsEnv::VARIABLES[0],
    TlsEnv::VARIABLES[1],
    TlsEnv::VARIABLES[2],
    TlsEnv::VARIABLES[3],
    TlsEnv::VARIABLES[4],
    TlsEnv::VARIABLES[5],
    TlsEnv::VARIABLES[6],
    TlsEnv::VARIABLES[7],
];

const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
const METRICS_EXPORTER: &str = "OTEL_METRICS_EXPORTER";
const METRICS_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const METRICS_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const METRICS_HEADERS: &str = "OTEL_EXPORTER_OTLP_METRICS_HEADERS";
const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const METRICS_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT";
const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const METRICS_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION";
const COMPRESSION: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
const METRIC_EXPORT_TIMEOUT: &str = "OTEL_METRIC_EXPORT_TIMEOUT";
const EXPORT_INTERVAL: &str = "OTEL_METRIC_EXPORT_INTERVAL";
const TEMPORALITY: &str = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
const HISTOGRAM_AGGREGATION: &str = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION";
/// Not an OpenTelemetry variable: the deadline of the guard's shutdown, in ms.
const SHUTDOWN_TIMEOUT: &str = "GYM_METRICS_OTEL_SHUTDOWN_TIMEOUT";

/// The longest export header value accepted, in bytes: 8 KiB, the header
/// line most HTTP servers and proxies accept (a longer value would be
/// refused by the collector at every export, or cut). A start-up error
/// beyond it.
pub(crate) const MAX_HEADER_VALUE: usize = 8 * 1024;

/// What a bad export header is told.
pub(crate) const HEADERS_EXPECTED: &str = "header names of letters, digits and dashes, and \
     values of visible ASCII (no CR, LF or other control character) of at most 8192 bytes";

/// What is wrong with the export header `name: value`, if anything: a
/// name that is not an HTTP token, a value with a byte HTTP forbids (CR,
/// LF, NUL, any control character but tab, non-ASCII), or longer than
/// [`MAX_HEADER_VALUE`]. Checked for every build, with or without a
/// transport, as the variables are read.
pub(crate) fn header_problem(name: &str, value: &str) -> Option<&'static str> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let visible = |b: u8| b == b'\t' || (0x20..0x7f).contains(&b);
    let fine = !name.is_empty()
        && name.bytes().all(token)
        && value.bytes().all(visible)
        && value.len() <= MAX_HEADER_VALUE;
    (!fine).then_some(HEADERS_EXPECTED)
}

/// OTLP request compression (`OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION`,
/// the specification's names): none by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Compression {
    /// Bodies sent as they are.
    #[default]
    None,
    /// OTLP/HTTP bodies gzipped (`Content-Encoding: gzip`), gRPC messages
    /// gzipped (`grpc-encoding: gzip`).
    Gzip,
}

impl Compression {
    /// Parses `gzip` or `none` (case-insensitive); `variable` names the
    /// source in the error.
    pub(crate) fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        let words = [("gzip", Compression::Gzip), ("none", Compression::None)];
        parse_choice(variable, value, &words, "")
    }
}

/// What the variables say; `None` where a variable is unset or blank.
/// [`OtelBuilder::from_env_lookup`] applies it over the defaults.
#[derive(Default)]
pub(crate) struct ExporterEnv {
    /// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
    /// `OTEL_SEMCONV_STABILITY_OPT_IN`.
    pub(crate) resource: OtelEnv,
    pub(crate) exporter: Option<MetricsExporter>,
    /// With the variable that set it and its value.
    pub(crate) protocol: Option<ProtocolSetting>,
    pub(crate) endpoint: Option<CollectorUrl>,
    pub(crate) headers: Option<Vec<(String, String)>>,
    pub(crate) export_timeout: Option<Duration>,
    pub(crate) compression: Option<Compression>,
    pub(crate) metric_export_timeout: Option<Duration>,
    pub(crate) export_interval: Option<Duration>,
    pub(crate) temporality: Option<TemporalityPreference>,
    pub(crate) histogram_aggregation: Option<HistogramAggregation>,
    pub(crate) shutdown_timeout: Option<Duration>,
}

impl ExporterEnv {
    /// Reads and validates the variables of `vars`; the signal-specific
    /// `..._METRICS_...` variable wins over the generic one.
    ///
    /// # Errors
    /// A variable with a bad value, naming the variable and the value
    /// (secrets redacted).
    pub(crate) fn read(vars: &EnvVars) -> Result<Self, ConfigError> {
        let get = |name: &'static str| vars.first(&[name]);
        let first = |specific, generic| vars.first(&[specific, generic]);
        let millis = |value: Option<(&'static str, &str)>| {
            value.map(|(name, v)| parse_millis(name, v)).transpose()
        };

        let mut env = ExporterEnv {
            resource: OtelEnv::read(vars)?,
            ..ExporterEnv::default()
        };
        if let Some((name, v)) = get(METRICS_EXPORTER) {
            env.exporter = Some(MetricsExporter::parse(name, v)?);
        }
        if let Some((name, v)) = get(SDK_DISABLED) {
            if parse_bool(name, v, Booleans::OpenTelemetry)? {
                env.exporter = Some(MetricsExporter::None);
            }
        }
        if let Some((name, v)) = first(METRICS_PROTOCOL, PROTOCOL) {
            env.protocol = Some(ProtocolSetting::chosen(
                OtlpProtocol::parse(name, v)?,
                name,
                v,
            ));
        }
        if let Some((source, url)) = get(METRICS_ENDPOINT) {
            let url = url.to_string();
            env.endpoint = Some(CollectorUrl::Exact { source, url });
        } else if let Some((source, url)) = get(ENDPOINT) {
            let url = url.to_string();
            env.endpoint = Some(CollectorUrl::Base { source, url });
        }
        let protocol = env.protocol.as_ref().map(|p| p.protocol);
        collector_url::resolve(
            env.endpoint.as_ref(),
            protocol.unwrap_or_else(crate::settings::protocol::built_default),
        )?;
        if let Some((name, v)) = first(METRICS_HEADERS, HEADERS) {
            let headers = parse_key_values(name, v)?;
            if let Some(expected) = headers.iter().find_map(|(k, v)| header_problem(k, v)) {
                return Err(ConfigError::invalid(name, v, expected));
            }
            env.headers = Some(headers);
        }
        env.export_timeout = millis(first(METRICS_TIMEOUT, TIMEOUT))?;
        if let Some((name, v)) = first(METRICS_COMPRESSION, COMPRESSION) {
            env.compression = Some(Compression::parse(name, v)?);
        }
        env.metric_export_timeout = millis(get(METRIC_EXPORT_TIMEOUT))?;
        env.export_interval = get(EXPORT_INTERVAL)
            .map(|(name, v)| {
                parse_millis_at_least(name, v, MIN_EXPORT_INTERVAL, EXPORT_INTERVAL_EXPECTED)
            })
            .transpose()?;
        if let Some((name, v)) = get(TEMPORALITY) {
            env.temporality = Some(TemporalityPreference::parse(name, v)?);
        }
        if let Some((name, v)) = get(HISTOGRAM_AGGREGATION) {
            env.histogram_aggregation = Some(HistogramAggregation::parse(name, v)?);
        }
        env.shutdown_timeout = millis(get(SHUTDOWN_TIMEOUT))?;
        Ok(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&'static str, &str)]) -> Result<ExporterEnv, ConfigError> {
        ExporterEnv::read(&EnvVars::from_pairs(vars))
    }

    fn error(vars: &[(&'static str, &str)]) -> ConfigError {
        match from(vars) {
            Err(e) => e,
            Ok(_) => panic!("{vars:?} was accepted"),
        }
    }

    #[test]
    fn nothing_set_reads_nothing() {
        let e = from(&[]).unwrap();
        assert_eq!(e.exporter, None);
        assert_eq!(e.protocol, None);
        assert_eq!(e.endpoint, None);
        assert_eq!(e.headers, None);
        assert_eq!(e.export_interval, None);
        assert_eq!(e.metric_export_timeout, None);
        assert!(e.resource.resource_attributes.is_empty());
    }

    #[test]
    fn every_variable_is_read() {
        let e = from(&[
            (OtelEnv::SERVICE_NAME, "lab"),
            (OtelEnv::RESOURCE_ATTRIBUTES, "team=rl,zone=a%2Fb"),
            (METRICS_EXPORTER, "console"),
            (PROTOCOL, "grpc"),
            (ENDPOINT, "http://c:4317"),
            (HEADERS, "authorization=Bearer%20x"),
            (TIMEOUT, "1500"),
            (COMPRESSION, "GZIP"),
            (METRIC_EXPORT_TIMEOUT, "2500"),
            (EXPORT_INTERVAL, "250"),
            (TEMPORALITY, "delta"),
            (HISTOGRAM_AGGREGATION, "base2_exponential_bucket_histogram"),
            (SHUTDOWN_TIMEOUT, "700"),
        ])
        .unwrap();
        assert_eq!(e.compression, Some(Compression::Gzip));
        assert_eq!(e.resource.service_name.as_deref(), Some("lab"));
        assert_eq!(
            e.resource.resource_attributes[1],
            ("zone".into(), "a/b".into())
        );
        assert_eq!(e.exporter, Some(MetricsExporter::Console));
        assert_eq!(
            e.protocol,
            Some(ProtocolSetting::chosen(
                OtlpProtocol::Grpc,
                PROTOCOL,
                "grpc"
            ))
        );
        assert!(matches!(e.endpoint, Some(CollectorUrl::Base { .. })));
        assert_eq!(
            e.headers,
            Some(vec![("authorization".to_string(), "Bearer x".to_string())])
        );
        assert_eq!(e.export_timeout, Some(Duration::from_millis(1500)));
        assert_eq!(e.metric_export_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(e.export_interval, Some(Duration::from_millis(250)));
        assert_eq!(e.temporality, Some(TemporalityPreference::Delta));
        assert_eq!(
            e.histogram_aggregation,
            Some(HistogramAggregation::Base2Exponential)
        );
        assert_eq!(e.shutdown_timeout, Some(Duration::from_millis(700)));
    }

    #[test]
    fn every_listed_variable_is_read() {
        // Each name in ENV_VARIABLES, set to a value no variable accepts,
        // must be rejected: a listed variable that `read` skipped would pass
        // (OTEL_SERVICE_NAME takes any text, so it is checked by value).
        // The TLS variables are read (and tested) in the kit's env/tls.rs.
        for name in ENV_VARIABLES
            .into_iter()
            .filter(|n| *n != OtelEnv::SERVICE_NAME && !TlsEnv::VARIABLES.contains(n))
        {
            let e = from(&[(name, "=not a value=")]).err();
            assert_eq!(e.map(|e| e.variable()), Some(name));
        }
        let e = from(&[(OtelEnv::SERVICE_NAME, " lab ")]).unwrap();
        assert_eq!(e.resource.service_name.as_deref(), Some("lab"));
    }

    #[test]
    fn signal_specific_variables_win() {
        let e = from(&[
            (PROTOCOL, "grpc"),
            (METRICS_PROTOCOL, "http/protobuf"),
            (TIMEOUT, "1"),
            (METRICS_TIMEOUT, "2"),
            (COMPRESSION, "gzip"),
            (METRICS_COMPRESSION, "none"),
            (ENDPOINT, "http://generic"),
            (METRICS_ENDPOINT, "http://specific/v1/metrics"),
        ])
        .unwrap();
        assert_eq!(
            e.protocol,
            Some(ProtocolSetting::chosen(
                OtlpProtocol::HttpProtobuf,
                METRICS_PROTOCOL,
                "http/protobuf"
            ))
        );
        assert_eq!(e.export_timeout, Some(Duration::from_millis(2)));
        assert_eq!(e.compression, Some(Compression::None));
        assert!(
            matches!(e.endpoint, Some(CollectorUrl::Exact { ref url, .. }) if url == "http://specific/v1/metrics")
        );
    }

    #[test]
    fn sdk_disabled_means_no_exporter() {
        let e = from(&[(SDK_DISABLED, "TRUE"), (METRICS_EXPORTER, "otlp")]).unwrap();
        assert_eq!(e.exporter, Some(MetricsExporter::None));
    }

    #[test]
    fn empty_values_count_as_unset() {
        let e = from(&[(METRICS_EXPORTER, " "), (EXPORT_INTERVAL, "")]).unwrap();
        assert_eq!(e.exporter, None);
        assert_eq!(e.export_interval, None);
    }

    #[test]
    fn a_bad_value_names_the_variable_and_the_value() {
        let cases = [
            (SDK_DISABLED, "yes"),
            (OtelEnv::RESOURCE_ATTRIBUTES, "novalue"),
            (METRICS_EXPORTER, "zipkin"),
            (METRICS_PROTOCOL, "http/xml"),
            (PROTOCOL, "carrier-pigeon"),
            (METRICS_ENDPOINT, "ftp://c:4318/v1/metrics"),
            (ENDPOINT, "http://c:99999"),
            (METRICS_ENDPOINT, "http://c:0/v1/metrics"),
            (METRICS_TIMEOUT, "-1"),
            (TIMEOUT, "0"),
            (METRICS_COMPRESSION, "zstd"),
            (COMPRESSION, "deflate"),
            (METRIC_EXPORT_TIMEOUT, "30s"),
            (METRIC_EXPORT_TIMEOUT, "0"),
            (EXPORT_INTERVAL, "10s"),
            (EXPORT_INTERVAL, "1"),
            (TEMPORALITY, "weekly"),
            (HISTOGRAM_AGGREGATION, "linear"),
            (SHUTDOWN_TIMEOUT, "forever"),
        ];
        // A bare host:port is a URL only for gRPC: refused while the
        // protocol (unset here) defaults to an OTLP/HTTP one.
        let bare = (ENDPOINT, "localhost:4318");
        let http_default = crate::settings::protocol::built_default().is_http();
        for (name, value) in cases.into_iter().chain(http_default.then_some(bare)) {
            let e = error(&[(name, value)]);
            assert_eq!(e.variable(), name);
            let text = e.to_string();
            assert!(text.contains(name) && text.contains(value), "{text}");
        }
    }

    #[test]
    fn a_bad_header_list_names_the_variable_and_keeps_its_values_secret() {
        for name in [METRICS_HEADERS, HEADERS] {
            let e = error(&[(name, "authorization=Bearer s3cret,=x")]);
            assert_eq!(e.variable(), name);
            let printed = format!("{e} / {e:?}");
            assert!(!printed.contains("s3cret"), "{printed}");
            assert!(
                printed.contains(name) && printed.contains("authorization="),
                "{printed}"
            );
        }
    }

    #[test]
    fn a_header_with_cr_lf_or_too_long_a_value_names_the_variable_and_keeps_it_secret() {
        let long = format!("authorization=Bearer%20s3cret{}", "x".repeat(100 * 1024));
        for name in [METRICS_HEADERS, HEADERS] {
            for value in [
                "authorization=Bearer%20s3cret%0D%0AX-Evil:%201",
                "authorization=Bearer%20s3cret%0A",
                "authorization=s3cret%00",
                long.as_str(),
            ] {
                let e = error(&[(name, value)]);
                assert_eq!(e.variable(), name);
                let printed = format!("{e} / {e:?}");
                assert!(!printed.contains("s3cret"), "{printed}");
                assert!(printed.len() < 2_000, "{} bytes printed", printed.len());
                assert!(
                    printed.contains("authorization=") && printed.contains("CR, LF"),
                    "{printed}"
                );
            }
        }
        let at_most = format!("k={}", "v".repeat(MAX_HEADER_VALUE));
        assert!(from(&[(HEADERS, at_most.as_str())]).is_ok());
        assert!(from(&[(HEADERS, "k=a%09b")]).is_ok(), "a tab is allowed");
    }
}
