//! Reading the standard `OTEL_*` variables into an [`OtelBuilder`].

use std::time::Duration;

use crate::endpoint::Endpoint;
use crate::key_values::parse_key_values;
use crate::{
    ConfigError, HistogramAggregation, MetricsExporter, OtelBuilder, OtlpProtocol,
    TemporalityPreference,
};

/// Every variable [`OtelBuilder::from_env`] reads.
///
/// ```
/// assert!(gym_metrics_otel::ENV_VARIABLES.contains(&"OTEL_METRIC_EXPORT_INTERVAL"));
/// ```
pub const ENV_VARIABLES: [&str; 16] = [
    SDK_DISABLED,
    SERVICE_NAME,
    RESOURCE_ATTRIBUTES,
    METRICS_EXPORTER,
    METRICS_PROTOCOL,
    PROTOCOL,
    METRICS_ENDPOINT,
    ENDPOINT,
    METRICS_HEADERS,
    HEADERS,
    METRICS_TIMEOUT,
    TIMEOUT,
    EXPORT_INTERVAL,
    TEMPORALITY,
    HISTOGRAM_AGGREGATION,
    SHUTDOWN_TIMEOUT,
];

const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
const METRICS_EXPORTER: &str = "OTEL_METRICS_EXPORTER";
const METRICS_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const METRICS_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const METRICS_HEADERS: &str = "OTEL_EXPORTER_OTLP_METRICS_HEADERS";
const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const METRICS_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT";
const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const EXPORT_INTERVAL: &str = "OTEL_METRIC_EXPORT_INTERVAL";
const TEMPORALITY: &str = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
const HISTOGRAM_AGGREGATION: &str = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION";
/// Not an OpenTelemetry variable: the deadline of the guard's shutdown, in ms.
const SHUTDOWN_TIMEOUT: &str = "GYM_METRICS_OTEL_SHUTDOWN_TIMEOUT";

impl OtelBuilder {
    /// The defaults overridden by the process environment: see
    /// [`OtelBuilder::from_env_lookup`] for the variables.
    ///
    /// # Errors
    /// A variable with a bad value, naming the variable and the value.
    ///
    /// ```
    /// let builder = gym_metrics_otel::OtelBuilder::from_env()?;
    /// # let _ = builder;
    /// # Ok::<(), gym_metrics_otel::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_env_lookup(|name| std::env::var(name).ok())
    }

    /// The defaults overridden by the variables `lookup` returns; an empty
    /// value counts as unset. The signal-specific `..._METRICS_...` variable
    /// wins over the generic one.
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `OTEL_SDK_DISABLED` | `true`: same as exporter `none` |
    /// | `OTEL_SERVICE_NAME` | base of `service.name` (default `gym`) |
    /// | `OTEL_RESOURCE_ATTRIBUTES` | `k=v,...` extra resource attributes |
    /// | `OTEL_METRICS_EXPORTER` | `otlp` (default), `console`, `none` |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL` | `http/protobuf` (default), `grpc` |
    /// | `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` | URL used as is |
    /// | `OTEL_EXPORTER_OTLP_ENDPOINT` | base URL (`/v1/metrics` appended for http) |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]HEADERS` | `k=v,...` request headers |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT` | export timeout, ms (default 10000) |
    /// | `OTEL_METRIC_EXPORT_INTERVAL` | ms between exports (default 10000) |
    /// | `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` | `cumulative` (default), `delta`, `lowmemory` |
    /// | `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` | `explicit_bucket_histogram` (default), `base2_exponential_bucket_histogram` |
    /// | `GYM_METRICS_OTEL_SHUTDOWN_TIMEOUT` | shutdown deadline, ms (default 5000) |
    ///
    /// Every value is also a builder setting, and explicit settings win. One
    /// caveat: the `opentelemetry-otlp` exporter itself also merges
    /// `OTEL_EXPORTER_OTLP_[METRICS_]HEADERS` (and reads `_COMPRESSION`)
    /// from the process environment, whatever `lookup` returns.
    ///
    /// # Errors
    /// A variable with a bad value, naming the variable and the value.
    ///
    /// ```
    /// use gym_metrics_otel::OtelBuilder;
    /// let env = |name: &str| match name {
    ///     "OTEL_METRIC_EXPORT_INTERVAL" => Some("soon".to_string()),
    ///     _ => None,
    /// };
    /// let err = OtelBuilder::from_env_lookup(env).unwrap_err();
    /// assert!(err.to_string().contains("OTEL_METRIC_EXPORT_INTERVAL=\"soon\""));
    /// ```
    pub fn from_env_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &'static str| {
            lookup(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (name, v))
        };
        let first = |specific: &'static str, generic: &'static str| get(specific).or(get(generic));

        let mut b = OtelBuilder::new();
        if let Some((_, v)) = get(SERVICE_NAME) {
            b = b.service_name(v.trim());
        }
        if let Some((name, v)) = get(RESOURCE_ATTRIBUTES) {
            b = b.resource_attributes(parse_key_values(name, &v)?);
        }
        if let Some((name, v)) = get(METRICS_EXPORTER) {
            b = b.exporter(MetricsExporter::parse(name, &v)?);
        }
        if let Some((name, v)) = get(SDK_DISABLED) {
            if parse_bool(name, &v)? {
                b = b.exporter(MetricsExporter::None);
            }
        }
        if let Some((name, v)) = first(METRICS_PROTOCOL, PROTOCOL) {
            b = b.protocol(OtlpProtocol::parse(name, &v)?);
        }
        if let Some((source, url)) = get(METRICS_ENDPOINT) {
            b.endpoint = Some(Endpoint::Exact { source, url });
        } else if let Some((source, url)) = get(ENDPOINT) {
            b.endpoint = Some(Endpoint::Base { source, url });
        }
        crate::endpoint::resolve(b.endpoint.as_ref(), b.protocol)?;
        if let Some((name, v)) = first(METRICS_HEADERS, HEADERS) {
            b = b.headers(parse_key_values(name, &v)?);
        }
        if let Some((name, v)) = first(METRICS_TIMEOUT, TIMEOUT) {
            b = b.export_timeout(parse_millis(name, &v)?);
        }
        if let Some((name, v)) = get(EXPORT_INTERVAL) {
            b = b.export_interval(parse_millis(name, &v)?);
        }
        if let Some((name, v)) = get(TEMPORALITY) {
            b = b.temporality(TemporalityPreference::parse(name, &v)?);
        }
        if let Some((name, v)) = get(HISTOGRAM_AGGREGATION) {
            b = b.histogram_aggregation(HistogramAggregation::parse(name, &v)?);
        }
        if let Some((name, v)) = get(SHUTDOWN_TIMEOUT) {
            b = b.shutdown_timeout(parse_millis(name, &v)?);
        }
        Ok(b)
    }
}

/// A positive whole number of milliseconds.
fn parse_millis(name: &'static str, value: &str) -> Result<Duration, ConfigError> {
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err(ConfigError::invalid(
            name,
            value,
            "a positive whole number of milliseconds, e.g. 10000",
        )),
    }
}

fn parse_bool(name: &'static str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError::invalid(name, value, "true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> Result<OtelBuilder, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        OtelBuilder::from_env_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn nothing_set_gives_the_defaults() {
        let b = from(&[]).unwrap();
        assert_eq!(b.exporter, MetricsExporter::Otlp);
        assert_eq!(b.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(b.export_interval, Duration::from_secs(10));
        assert_eq!(b.export_timeout, Duration::from_secs(10));
        assert_eq!(b.shutdown_timeout, Duration::from_secs(5));
        assert_eq!(b.temporality, TemporalityPreference::Cumulative);
        assert_eq!(b.endpoint, None);
    }

    #[test]
    fn every_variable_is_read() {
        let b = from(&[
            (SERVICE_NAME, "lab"),
            (RESOURCE_ATTRIBUTES, "team=rl,zone=a%2Fb"),
            (METRICS_EXPORTER, "console"),
            (PROTOCOL, "grpc"),
            (ENDPOINT, "http://c:4317"),
            (HEADERS, "authorization=Bearer%20x"),
            (TIMEOUT, "1500"),
            (EXPORT_INTERVAL, "250"),
            (TEMPORALITY, "delta"),
            (HISTOGRAM_AGGREGATION, "base2_exponential_bucket_histogram"),
            (SHUTDOWN_TIMEOUT, "700"),
        ])
        .unwrap();
        assert_eq!(b.service_name.as_deref(), Some("lab"));
        assert_eq!(b.resource_attributes[1], ("zone".into(), "a/b".into()));
        assert_eq!(b.exporter, MetricsExporter::Console);
        assert_eq!(b.protocol, OtlpProtocol::Grpc);
        assert!(matches!(b.endpoint, Some(Endpoint::Base { .. })));
        assert_eq!(
            b.headers,
            vec![("authorization".to_string(), "Bearer x".to_string())]
        );
        assert_eq!(b.export_timeout, Duration::from_millis(1500));
        assert_eq!(b.export_interval, Duration::from_millis(250));
        assert_eq!(b.temporality, TemporalityPreference::Delta);
        assert_eq!(
            b.histogram_aggregation,
            HistogramAggregation::Base2Exponential
        );
        assert_eq!(b.shutdown_timeout, Duration::from_millis(700));
    }

    #[test]
    fn signal_specific_variables_win() {
        let b = from(&[
            (PROTOCOL, "grpc"),
            (METRICS_PROTOCOL, "http/protobuf"),
            (TIMEOUT, "1"),
            (METRICS_TIMEOUT, "2"),
            (ENDPOINT, "http://generic"),
            (METRICS_ENDPOINT, "http://specific/v1/metrics"),
        ])
        .unwrap();
        assert_eq!(b.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(b.export_timeout, Duration::from_millis(2));
        assert!(
            matches!(b.endpoint, Some(Endpoint::Exact { ref url, .. }) if url == "http://specific/v1/metrics")
        );
    }

    #[test]
    fn sdk_disabled_means_no_exporter() {
        let b = from(&[(SDK_DISABLED, "TRUE"), (METRICS_EXPORTER, "otlp")]).unwrap();
        assert_eq!(b.exporter, MetricsExporter::None);
    }

    #[test]
    fn empty_values_count_as_unset() {
        let b = from(&[(METRICS_EXPORTER, " "), (EXPORT_INTERVAL, "")]).unwrap();
        assert_eq!(b.exporter, MetricsExporter::Otlp);
    }

    #[test]
    fn a_bad_value_names_the_variable_and_the_value() {
        let cases = [
            (SDK_DISABLED, "yes"),
            (RESOURCE_ATTRIBUTES, "novalue"),
            (METRICS_EXPORTER, "zipkin"),
            (METRICS_PROTOCOL, "http/json"),
            (PROTOCOL, "carrier-pigeon"),
            (METRICS_HEADERS, "=x"),
            (METRICS_ENDPOINT, "https://c:4318/v1/metrics"),
            (ENDPOINT, "localhost:4318"),
            (METRICS_TIMEOUT, "-1"),
            (TIMEOUT, "0"),
            (EXPORT_INTERVAL, "10s"),
            (TEMPORALITY, "weekly"),
            (HISTOGRAM_AGGREGATION, "linear"),
            (SHUTDOWN_TIMEOUT, "forever"),
        ];
        for (name, value) in cases {
            let e = from(&[(name, value)]).unwrap_err();
            assert_eq!(e.variable(), name);
            let text = e.to_string();
            assert!(text.contains(name) && text.contains(value), "{text}");
        }
    }
}
