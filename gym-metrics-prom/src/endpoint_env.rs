//! The variables of the `/metrics` endpoint: where it listens
//! (`OTEL_EXPORTER_PROMETHEUS_HOST`, `_PORT`) and its web configuration
//! file, beside the resource variables both backends read (the kit's
//! [`OtelEnv`]), for [`crate::PrometheusBuilder::from_env`].

use std::path::PathBuf;

use gym_metrics_kit::env::{parse_number, EnvVars, OtelEnv};

use crate::error::ConfigError;
use gym_metrics_kit::recording::NativeConfig;

/// `OTEL_EXPORTER_PROMETHEUS_HOST`: the listen host (default `localhost`).
pub(crate) const HOST_VAR: &str = "OTEL_EXPORTER_PROMETHEUS_HOST";
/// `OTEL_EXPORTER_PROMETHEUS_PORT`: the listen port (default 9464).
pub(crate) const PORT_VAR: &str = "OTEL_EXPORTER_PROMETHEUS_PORT";

/// `GYM_METRICS_WEB_CONFIG_FILE`: the endpoint's web configuration file
/// (exporter-toolkit format: TLS and basic auth).
pub(crate) const WEB_CONFIG_FILE_VAR: &str = "GYM_METRICS_WEB_CONFIG_FILE";

/// `GYM_METRICS_NATIVE_HISTOGRAM_SCHEMA`: the native histograms' schema.
pub(crate) const NATIVE_SCHEMA_VAR: &str = "GYM_METRICS_NATIVE_HISTOGRAM_SCHEMA";
/// `GYM_METRICS_NATIVE_HISTOGRAM_BUCKET_LIMIT`: the most native buckets a
/// series shows.
pub(crate) const NATIVE_BUCKET_LIMIT_VAR: &str = "GYM_METRICS_NATIVE_HISTOGRAM_BUCKET_LIMIT";

/// Every variable [`crate::PrometheusBuilder::from_env`] reads.
pub(crate) const VARIABLES: [&str; 9] = [
    HOST_VAR,
    PORT_VAR,
    OtelEnv::SERVICE_NAME,
    OtelEnv::RESOURCE_ATTRIBUTES,
    OtelEnv::SEMCONV_STABILITY_OPT_IN,
    OtelEnv::EXEMPLAR_FILTER,
    WEB_CONFIG_FILE_VAR,
    NATIVE_SCHEMA_VAR,
    NATIVE_BUCKET_LIMIT_VAR,
];

/// What the environment says; `None` where a variable is unset or blank.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct EndpointEnv {
    pub(crate) host: Option<String>,
    pub(crate) port: Option<u16>,
    pub(crate) web_config_file: Option<PathBuf>,
    /// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
    /// `OTEL_SEMCONV_STABILITY_OPT_IN`.
    pub(crate) resource: OtelEnv,
    pub(crate) native: NativeConfig,
}

impl EndpointEnv {
    /// Reads the variables from `vars` (the process environment in
    /// production, a map in tests).
    pub(crate) fn read(vars: &EnvVars) -> Result<Self, ConfigError> {
        let get = |name| vars.first(&[name]);
        let port = get(PORT_VAR)
            .map(|(name, value)| {
                parse_number(
                    name,
                    value,
                    "a port number from 0 to 65535 (0 picks a free port)",
                )
            })
            .transpose()?;
        let resource = OtelEnv::read(vars)?;
        let mut native = NativeConfig::default();
        if let Some((name, value)) = get(NATIVE_SCHEMA_VAR) {
            const SCHEMA: &str = "a schema from -4 to 8 (3, the default: eight buckets per doubling, about 9 % wide)";
            let schema = parse_number(name, value, SCHEMA)?;
            native = (native.with_schema(schema))
                .map_err(|_| ConfigError::invalid(name, value, SCHEMA))?;
        }
        if let Some((name, value)) = get(NATIVE_BUCKET_LIMIT_VAR) {
            const LIMIT: &str = "a whole number of buckets, 1 or more (default 160)";
            let limit = parse_number(name, value, LIMIT)?;
            native = (native.with_bucket_limit(limit))
                .map_err(|_| ConfigError::invalid(name, value, LIMIT))?;
        }
        let web_config_file = get(WEB_CONFIG_FILE_VAR);
        if let Some((name, file)) = web_config_file.filter(|_| !cfg!(feature = "web-config")) {
            return Err(ConfigError::invalid(
                name,
                file,
                "unset: this program's gym-metrics-prom was built without its `web-config` feature, so it cannot serve TLS or basic auth (build it with the feature, which is on by default)",
            ));
        }
        Ok(Self {
            web_config_file: web_config_file.map(|(_, file)| PathBuf::from(file)),
            host: get(HOST_VAR).map(|(_, h)| h.trim().to_string()),
            port,
            resource,
            native,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&'static str, &str)]) -> Result<EndpointEnv, ConfigError> {
        EndpointEnv::read(&EnvVars::from_pairs(pairs))
    }

    #[test]
    fn unset_and_empty_mean_default() {
        assert_eq!(env(&[]).unwrap(), EndpointEnv::default());
        assert_eq!(
            env(&[(PORT_VAR, " "), (HOST_VAR, "")]).unwrap(),
            EndpointEnv::default()
        );
    }

    #[test]
    fn reads_every_variable() {
        let c = env(&[
            (HOST_VAR, "0.0.0.0"),
            (PORT_VAR, "9100"),
            (OtelEnv::SERVICE_NAME, "lab"),
            (OtelEnv::RESOURCE_ATTRIBUTES, "team=rl, note=a%2Cb%20c ,"),
            (WEB_CONFIG_FILE_VAR, "/etc/gym/web.yml"),
            (NATIVE_SCHEMA_VAR, "-2"),
            (NATIVE_BUCKET_LIMIT_VAR, " 40"),
            (OtelEnv::SEMCONV_STABILITY_OPT_IN, "http/dup"),
        ])
        .unwrap();
        assert!(c.resource.http_dup);
        assert_eq!((c.native.schema, c.native.bucket_limit), (-2, 40));
        assert_eq!(
            c.web_config_file.as_deref(),
            Some(std::path::Path::new("/etc/gym/web.yml"))
        );
        assert_eq!(c.host.as_deref(), Some("0.0.0.0"));
        assert_eq!(c.port, Some(9100));
        assert_eq!(c.resource.service_name.as_deref(), Some("lab"));
        assert_eq!(
            c.resource.resource_attributes,
            vec![
                ("team".into(), "rl".into()),
                ("note".into(), "a,b c".into())
            ]
        );
    }

    #[test]
    fn bad_values_name_the_variable_and_the_value() {
        for (var, value) in [
            (PORT_VAR, "http"),
            (PORT_VAR, "70000"),
            (OtelEnv::RESOURCE_ATTRIBUTES, "team"),
            (OtelEnv::RESOURCE_ATTRIBUTES, "=x"),
            (OtelEnv::RESOURCE_ATTRIBUTES, "a=%zz"),
            (NATIVE_SCHEMA_VAR, "9"),
            (NATIVE_SCHEMA_VAR, "fine"),
            (NATIVE_BUCKET_LIMIT_VAR, "0"),
            (NATIVE_BUCKET_LIMIT_VAR, "-1"),
            (OtelEnv::SEMCONV_STABILITY_OPT_IN, "http=dup"),
        ] {
            let e = env(&[(var, value)]).unwrap_err().to_string();
            assert!(e.contains(var) && e.contains(value), "{e}");
        }
    }
}
