//! The one configuration error of every backend: which variable (or builder
//! setting), its value with secrets redacted, and what was expected.

use std::borrow::Cow;

use crate::redact::redact_value;

/// A configuration value was rejected: an environment variable (`OTEL_*`,
/// `GYM_METRICS_*`) or a builder setting. The message names the variable and
/// the value, and says what would have been accepted.
///
/// The value is redacted when the error is made (see [`crate::redact::redact_value`]):
/// header values and a URL's user-info and query values never reach the message, `Debug`, or a
/// log line that prints the error.
///
/// ```
/// use gym_metrics_kit::ConfigError;
/// let e = ConfigError::invalid("OTEL_METRICS_EXPORTER", "zipkin", "one of otlp, console, none");
/// assert!(e.to_string().contains("OTEL_METRICS_EXPORTER=\"zipkin\""));
/// assert_eq!(e.variable(), "OTEL_METRICS_EXPORTER");
///
/// let e = ConfigError::invalid("OTEL_EXPORTER_OTLP_HEADERS", "authorization Bearer t0k", "k=v,...");
/// assert!(!e.to_string().contains("t0k") && !format!("{e:?}").contains("t0k"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?} is not valid: expected {expected}; fix or unset it")]
pub struct ConfigError {
    variable: &'static str,
    value: String,
    expected: Cow<'static, str>,
}

impl ConfigError {
    /// A rejected `value` of `variable`, with what was `expected` instead.
    /// Secrets in `value` are redacted here, before the error exists.
    ///
    /// ```
    /// let e = gym_metrics_kit::ConfigError::invalid("OTEL_EXPORTER_PROMETHEUS_PORT", "http", "a port number");
    /// assert!(e.to_string().contains("a port number"));
    /// ```
    pub fn invalid(
        variable: &'static str,
        value: impl AsRef<str>,
        expected: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            variable,
            value: redact_value(variable, value.as_ref()),
            expected: expected.into(),
        }
    }

    /// The variable or setting that was rejected.
    ///
    /// ```
    /// let e = gym_metrics_kit::ConfigError::invalid("OTEL_METRICS_EXPORTER", "x", "otlp");
    /// assert_eq!(e.variable(), "OTEL_METRICS_EXPORTER");
    /// ```
    pub fn variable(&self) -> &'static str {
        self.variable
    }

    /// The rejected value as the message prints it: secrets redacted.
    ///
    /// ```
    /// let e = gym_metrics_kit::ConfigError::invalid("OTEL_EXPORTER_OTLP_ENDPOINT", "https://u:p@c", "http://");
    /// assert_eq!(e.value(), "https://[redacted]@c");
    /// ```
    pub fn value(&self) -> &str {
        &self.value
    }

    /// What would have been accepted.
    ///
    /// ```
    /// let e = gym_metrics_kit::ConfigError::invalid("V", "x", "true or false");
    /// assert_eq!(e.expected(), "true or false");
    /// ```
    pub fn expected(&self) -> &str {
        &self.expected
    }
}
