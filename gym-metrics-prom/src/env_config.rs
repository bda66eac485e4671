//! The OpenTelemetry environment variables the builder honours.

use crate::error::ConfigError;
use crate::WEB_CONFIG_FILE_VAR;

/// `OTEL_EXPORTER_PROMETHEUS_HOST`: the listen host (default `localhost`).
pub(crate) const HOST_VAR: &str = "OTEL_EXPORTER_PROMETHEUS_HOST";
/// `OTEL_EXPORTER_PROMETHEUS_PORT`: the listen port (default 9464).
pub(crate) const PORT_VAR: &str = "OTEL_EXPORTER_PROMETHEUS_PORT";
/// `OTEL_SERVICE_NAME`: the base of `service.name`.
pub(crate) const SERVICE_NAME_VAR: &str = "OTEL_SERVICE_NAME";
/// `OTEL_RESOURCE_ATTRIBUTES`: `key=value,...`, values percent-encoded.
pub(crate) const RESOURCE_ATTRIBUTES_VAR: &str = "OTEL_RESOURCE_ATTRIBUTES";

/// Every variable [`crate::PrometheusBuilder::from_env`] reads.
pub(crate) const VARIABLES: [&str; 5] = [
    HOST_VAR,
    PORT_VAR,
    SERVICE_NAME_VAR,
    RESOURCE_ATTRIBUTES_VAR,
    WEB_CONFIG_FILE_VAR,
];

/// What the environment says; `None` where a variable is unset or empty.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct EnvConfig {
    pub(crate) host: Option<String>,
    pub(crate) port: Option<u16>,
    pub(crate) service_name: Option<String>,
    pub(crate) resource_attributes: Vec<(String, String)>,
    pub(crate) web_config_file: Option<std::path::PathBuf>,
}

impl EnvConfig {
    /// Reads the variables through `lookup` (the process environment in
    /// production, a map in tests).
    pub(crate) fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let port = match get(PORT_VAR) {
            None => None,
            Some(value) => Some(value.trim().parse::<u16>().map_err(|_| {
                ConfigError::invalid(
                    PORT_VAR,
                    &value,
                    "a port number from 0 to 65535 (0 picks a free port)",
                )
            })?),
        };
        let resource_attributes = match get(RESOURCE_ATTRIBUTES_VAR) {
            None => Vec::new(),
            Some(value) => {
                gym_metrics_kit::resource::parse_key_value_list(&value).ok_or_else(|| {
                    ConfigError::invalid(
                        RESOURCE_ATTRIBUTES_VAR,
                        &value,
                        gym_metrics_kit::resource::KEY_VALUE_LIST_FORMAT,
                    )
                })?
            }
        };
        let web_config_file = get(WEB_CONFIG_FILE_VAR).map(std::path::PathBuf::from);
        if web_config_file.is_some() && !cfg!(feature = "web-config") {
            return Err(ConfigError::invalid(
                WEB_CONFIG_FILE_VAR,
                get(WEB_CONFIG_FILE_VAR).unwrap_or_default(),
                "unset: this program's gym-metrics-prom was built without its `web-config` feature, so it cannot serve TLS or basic auth (build it with the feature, which is on by default)",
            ));
        }
        Ok(Self {
            web_config_file,
            host: get(HOST_VAR).map(|h| h.trim().to_string()),
            port,
            service_name: get(SERVICE_NAME_VAR).map(|s| s.trim().to_string()),
            resource_attributes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Result<EnvConfig, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EnvConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn unset_and_empty_mean_default() {
        assert_eq!(env(&[]).unwrap(), EnvConfig::default());
        assert_eq!(
            env(&[(PORT_VAR, " "), (HOST_VAR, "")]).unwrap(),
            EnvConfig::default()
        );
    }

    #[test]
    fn reads_every_variable() {
        let c = env(&[
            (HOST_VAR, "0.0.0.0"),
            (PORT_VAR, "9100"),
            (SERVICE_NAME_VAR, "lab"),
            (RESOURCE_ATTRIBUTES_VAR, "team=rl, note=a%2Cb%20c ,"),
            (WEB_CONFIG_FILE_VAR, "/etc/gym/web.yml"),
        ])
        .unwrap();
        assert_eq!(
            c.web_config_file.as_deref(),
            Some(std::path::Path::new("/etc/gym/web.yml"))
        );
        assert_eq!(c.host.as_deref(), Some("0.0.0.0"));
        assert_eq!(c.port, Some(9100));
        assert_eq!(c.service_name.as_deref(), Some("lab"));
        assert_eq!(
            c.resource_attributes,
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
            (RESOURCE_ATTRIBUTES_VAR, "team"),
            (RESOURCE_ATTRIBUTES_VAR, "=x"),
            (RESOURCE_ATTRIBUTES_VAR, "a=%zz"),
        ] {
            let e = env(&[(var, value)]).unwrap_err().to_string();
            assert!(e.contains(var) && e.contains(value), "{e}");
        }
    }
}
