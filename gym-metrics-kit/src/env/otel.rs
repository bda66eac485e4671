//! The OpenTelemetry variables both backends read: the service name and
//! the resource attributes every series or data point carries.

use crate::env::{parse_key_values, EnvVars};
use crate::ConfigError;

/// `OTEL_SERVICE_NAME` (the base of `service.name`) and
/// `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, values percent-encoded),
/// as the environment gives them; a blank value counts as unset.
///
/// ```
/// use gym_metrics_kit::env::{EnvVars, OtelEnv};
/// let vars = EnvVars::from_lookup(&OtelEnv::VARIABLES, |name| match name {
///     "OTEL_SERVICE_NAME" => Some(" lab ".to_string()),
///     _ => Some("team=rl".to_string()),
/// });
/// let env = OtelEnv::read(&vars)?;
/// assert_eq!(env.service_name.as_deref(), Some("lab"));
/// assert_eq!(env.resource_attributes, [("team".to_string(), "rl".to_string())]);
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtelEnv {
    /// `OTEL_SERVICE_NAME`, trimmed.
    pub service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES`, decoded; empty when unset.
    pub resource_attributes: Vec<(String, String)>,
}

impl OtelEnv {
    /// `OTEL_SERVICE_NAME`.
    pub const SERVICE_NAME: &'static str = "OTEL_SERVICE_NAME";

    /// `OTEL_RESOURCE_ATTRIBUTES`.
    pub const RESOURCE_ATTRIBUTES: &'static str = "OTEL_RESOURCE_ATTRIBUTES";

    /// Every variable [`OtelEnv::read`] reads.
    ///
    /// ```
    /// use gym_metrics_kit::env::OtelEnv;
    /// assert!(OtelEnv::VARIABLES.contains(&OtelEnv::SERVICE_NAME));
    /// ```
    pub const VARIABLES: [&'static str; 2] = [Self::SERVICE_NAME, Self::RESOURCE_ATTRIBUTES];

    /// Reads the variables from `vars`.
    ///
    /// # Errors
    /// `OTEL_RESOURCE_ATTRIBUTES` that is not a `key=value` list, naming
    /// the variable and the value.
    ///
    /// ```
    /// use gym_metrics_kit::env::{EnvVars, OtelEnv};
    /// let vars = EnvVars::from_lookup(&OtelEnv::VARIABLES, |_| Some("team".to_string()));
    /// let e = OtelEnv::read(&vars).unwrap_err();
    /// assert_eq!(e.variable(), "OTEL_RESOURCE_ATTRIBUTES");
    /// ```
    pub fn read(vars: &EnvVars) -> Result<Self, ConfigError> {
        let resource_attributes = match vars.first(&[Self::RESOURCE_ATTRIBUTES]) {
            Some((name, value)) => parse_key_values(name, value)?,
            None => Vec::new(),
        };
        Ok(Self {
            service_name: vars
                .first(&[Self::SERVICE_NAME])
                .map(|(_, name)| name.trim().to_string()),
            resource_attributes,
        })
    }
}
