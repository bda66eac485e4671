//! What can go wrong at configuration, at start-up and at shutdown; every
//! message says what to do about it.

use std::time::Duration;

// A configuration value was rejected: an `OTEL_*` variable or a builder
// setting. The one error type of every gym-metrics backend, secrets redacted.
pub use gym_metrics_kit::ConfigError;

/// The backend could not be started.
///
/// ```
/// use gym_metrics_otel::BuildError;
/// let e = BuildError::AlreadyInstalled;
/// assert!(e.to_string().contains("once"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A setting is invalid (e.g. an endpoint that is not an `http://` URL).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The OTLP exporter rejected its configuration. The exporter's own
    /// message, with the user-info and query values of any URL in it redacted.
    #[error("the OTLP exporter could not be built: {0}; check the endpoint, headers and protocol settings")]
    Exporter(String),
    /// The configuration selects an OTLP transport this build leaves out:
    /// its Cargo feature is off. Never a silent fallback to another one.
    ///
    /// ```
    /// use gym_metrics_otel::BuildError;
    /// let e = BuildError::TransportNotBuilt {
    ///     variable: "OTEL_EXPORTER_OTLP_PROTOCOL",
    ///     value: "grpc".into(),
    ///     feature: "grpc",
    /// };
    /// let text = e.to_string();
    /// assert!(text.contains(r#"OTEL_EXPORTER_OTLP_PROTOCOL="grpc""#) && text.contains("`grpc`"));
    /// ```
    #[error(
        "{variable}={value:?} needs an OTLP transport this build of gym-metrics-otel leaves out: \
         enable its Cargo feature `{feature}`, {}",
        crate::settings::protocol::built_alternatives()
    )]
    TransportNotBuilt {
        /// The variable or builder setting that selected it
        /// (`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, `protocol`, …); for a
        /// build without any transport, the exporter's.
        variable: &'static str,
        /// Its value, as given.
        value: String,
        /// The Cargo feature that builds the transport in: `grpc`,
        /// `http-proto` or `http-json`.
        feature: &'static str,
    },
    /// The thread that drives gRPC exports could not be started.
    #[error("the gRPC exporter thread could not be started: {0}; the process may be out of threads or memory, or use protocol http/protobuf")]
    Runtime(#[source] std::io::Error),
    /// Another gym-metrics backend is already installed in this process.
    #[error("{}", gym_metrics_api::backend::ALREADY_INSTALLED)]
    AlreadyInstalled,
    /// Another `metrics` recorder is installed in this process (the
    /// gym-metrics recorder was installed all the same).
    #[cfg(feature = "metrics-bridge")]
    #[error("{}", gym_metrics_kit::bridge::MetricsRecorderTaken)]
    MetricsRecorderTaken,
    /// The program was built with the API's `off` feature: this backend
    /// would record nothing, so it refuses to start.
    #[error(transparent)]
    CompiledOff(#[from] gym_metrics_api::backend::CompiledOffError),
}

/// The shared install sequence's refusals, as this backend says them.
impl gym_metrics_kit::install::InstallFailure for BuildError {
    const ALREADY_INSTALLED: Self = Self::AlreadyInstalled;
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
#[non_exhaustive]
pub enum ShutdownError {
    /// The final export did not finish within the deadline (e.g. the
    /// collector accepts connections but never answers).
    #[error("shutdown did not finish within {deadline:?}: the collector did not answer in time, so the last values may not have been exported; check the collector or raise the shutdown timeout")]
    TimedOut {
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The final export (or the exporter's shutdown) failed; the SDK's
    /// message, URL user-info and query values redacted.
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
#[non_exhaustive]
pub enum FlushError {
    /// The export did not finish within the deadline; it may go on in the
    /// background (an export that failed only after the deadline counts here).
    #[error("flush did not finish within {deadline:?}: the collector did not answer in time; check the collector or raise the shutdown timeout")]
    TimedOut {
        /// The deadline that passed.
        deadline: Duration,
    },
    /// The export failed; the SDK's message, URL user-info and query values redacted.
    #[error(
        "the export failed: {0}; check that the collector is reachable at the configured endpoint"
    )]
    Export(String),
}
