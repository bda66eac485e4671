//! What can go wrong at configuration, at start-up and at shutdown; every
//! message says what to do about it.

use std::time::Duration;

/// A configuration value was rejected: an `OTEL_*` variable or a builder
/// setting. The message names the variable (or setting) and the value.
///
/// ```
/// use gym_metrics_otel::ConfigError;
/// let e = ConfigError::invalid("OTEL_METRICS_EXPORTER", "zipkin", "one of otlp, console, none");
/// assert!(e.to_string().contains("OTEL_METRICS_EXPORTER=\"zipkin\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value that does not parse or is not supported.
    #[error("{variable}={value:?} is not valid: expected {expected}; fix or unset it")]
    InvalidValue {
        /// The environment variable or builder setting, e.g. `OTEL_METRIC_EXPORT_INTERVAL`.
        variable: &'static str,
        /// The rejected value, verbatim.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
}

impl ConfigError {
    /// A rejected `value` of `variable`, with what was `expected` instead.
    ///
    /// ```
    /// let e = gym_metrics_otel::ConfigError::invalid("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "milliseconds");
    /// assert!(e.to_string().contains("milliseconds"));
    /// ```
    pub fn invalid(
        variable: &'static str,
        value: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        ConfigError::InvalidValue {
            variable,
            value: value.into(),
            expected: expected.into(),
        }
    }

    /// The variable or setting that was rejected.
    ///
    /// ```
    /// let e = gym_metrics_otel::ConfigError::invalid("OTEL_METRICS_EXPORTER", "x", "otlp");
    /// assert_eq!(e.variable(), "OTEL_METRICS_EXPORTER");
    /// ```
    pub fn variable(&self) -> &'static str {
        match self {
            ConfigError::InvalidValue { variable, .. } => variable,
        }
    }
}

/// The backend could not be started.
///
/// ```
/// use gym_metrics_otel::BuildError;
/// let e = BuildError::AlreadyInstalled;
/// assert!(e.to_string().contains("once"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A setting is invalid (e.g. an endpoint that is not an `http://` URL).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The OTLP exporter rejected its configuration.
    #[error("the OTLP exporter could not be built: {0}; check the endpoint, headers and protocol settings")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// The thread that drives gRPC exports could not be started.
    #[error("the gRPC exporter thread could not be started: {0}; the process may be out of threads or memory, or use protocol http/protobuf")]
    Runtime(#[source] std::io::Error),
    /// Another gym-metrics backend is already installed in this process.
    #[error("a gym-metrics recorder is already installed in this process: install one backend, once, at start-up")]
    AlreadyInstalled,
    /// The program was built with the API's `off` feature: this backend
    /// would record nothing, so it refuses to start.
    #[error(transparent)]
    CompiledOff(#[from] gym_metrics_api::backend::CompiledOffError),
}

/// Shutdown did not complete cleanly. The process can exit regardless: no
/// thread of the backend keeps it alive.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_otel::ShutdownError;
/// let e = ShutdownError::TimedOut { deadline: Duration::from_secs(5) };
/// assert!(e.to_string().contains("5s"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShutdownError {
    /// The final export did not finish within the deadline (e.g. the
    /// collector accepts connections but never answers).
    #[error("shutdown did not finish within {deadline:?}: the collector did not answer in time, so the last values may not have been exported; check the collector or raise the shutdown timeout")]
    TimedOut {
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The final export (or the exporter's shutdown) failed.
    #[error("the final export failed: {0}; check that the collector is reachable at the configured endpoint")]
    Export(String),
}

/// A [`crate::OtelGuard::force_flush`] did not complete.
///
/// ```
/// use std::time::Duration;
/// let e = gym_metrics_otel::FlushError::TimedOut { deadline: Duration::from_millis(300) };
/// assert!(e.to_string().contains("300ms"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlushError {
    /// The export did not finish within the deadline; it goes on in the background.
    #[error("flush did not finish within {deadline:?}: the collector did not answer in time; check the collector or raise the shutdown timeout")]
    TimedOut {
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The export failed.
    #[error(
        "the export failed: {0}; check that the collector is reachable at the configured endpoint"
    )]
    Export(String),
}
