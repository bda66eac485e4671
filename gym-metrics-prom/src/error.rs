//! What can go wrong configuring and starting the exporter, said so that the
//! reader knows what to do.

use std::net::SocketAddr;

// A configuration value (from the environment) that cannot be used: the
// one error type of every gym-metrics backend, secrets redacted.
pub use gym_metrics_kit::ConfigError;

/// Building or starting the exporter failed.
///
/// ```
/// let e = gym_metrics_prom::BuildError::AlreadyInstalled;
/// assert!(e.to_string().contains("once"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The listen address could not be bound (in use, or not local).
    #[error("cannot listen on {addr}: {source}; {}", bind_advice(.source))]
    Bind {
        /// The address tried.
        addr: SocketAddr,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The listen host did not resolve to any address.
    #[error("cannot resolve listen host {host:?} (port {port}): {reason}; set OTEL_EXPORTER_PROMETHEUS_HOST to an IP address or a resolvable name")]
    Resolve {
        /// The host name.
        host: String,
        /// The port.
        port: u16,
        /// Why it failed.
        reason: String,
    },
    /// A gym-metrics recorder is already installed in this process.
    #[error("{}", gym_metrics_api::backend::ALREADY_INSTALLED)]
    AlreadyInstalled,
    /// The program was built with the API's `off` feature: this backend
    /// would record nothing, so it refuses to start.
    #[error(transparent)]
    CompiledOff(#[from] gym_metrics_api::backend::CompiledOffError),
    /// Another `metrics` recorder is installed in this process (the
    /// gym-metrics recorder was installed all the same).
    #[cfg(feature = "metrics-bridge")]
    #[error("{}", gym_metrics_kit::bridge::MetricsRecorderTaken)]
    MetricsRecorderTaken,
    /// The application's `prometheus::Registry`
    /// ([`crate::PrometheusBuilder::with_registry`]) holds a family whose
    /// samples would meet one of ours in the exposition.
    #[cfg(feature = "prometheus-registry")]
    #[error("the application's prometheus::Registry has a family {family:?} that meets gym-metrics' family {ours:?} in /metrics: rename it (a `process_*` family from the prometheus crate's process collector: drop that collector or with_process_metrics(), one of them is enough)")]
    RegistryClash {
        /// The registry's family.
        family: String,
        /// Our family (or the sample name of a bridged `metrics` family) it meets.
        ours: String,
    },
    /// The web configuration file ([`crate::PrometheusBuilder::web_config_file`],
    /// `GYM_METRICS_WEB_CONFIG_FILE`) or a file it names cannot be used.
    #[cfg(feature = "web-config")]
    #[error(transparent)]
    WebConfig(#[from] crate::WebConfigError),
    /// The endpoint's runtime or thread could not be started.
    #[error("cannot start the metrics endpoint thread: {0}; the process may be out of threads or file descriptors")]
    Runtime(std::io::Error),
}

/// The shared install sequence's refusals, as this backend says them.
impl gym_metrics_kit::install::InstallFailure for BuildError {
    const ALREADY_INSTALLED: Self = Self::AlreadyInstalled;
}

/// The scrape endpoint did not stop cleanly. The port is free and the
/// process can exit regardless.
///
/// ```
/// let e = gym_metrics_prom::ShutdownError::EndpointPanicked;
/// assert!(e.to_string().contains("panicked"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShutdownError {
    /// The endpoint's thread panicked while serving, so scrapes may have
    /// failed before shutdown (its panic message went to standard error).
    #[error("the metrics endpoint thread panicked while serving, so some scrapes may have failed; its panic message is on standard error: please report it")]
    EndpointPanicked,
    /// A final scrape was awaited ([`crate::PrometheusBuilder::final_scrape_wait`])
    /// and none came: what was recorded since the last scrape was not
    /// scraped. The endpoint has stopped all the same.
    #[error("no scrape came within the final-scrape wait of {waited:?}, so the values recorded since the last scrape were not collected; check that Prometheus scrapes this process, or raise the wait above its scrape interval")]
    FinalScrapeMissed {
        /// The configured wait.
        waited: std::time::Duration,
    },
}

/// What to do about a failed bind, by its cause.
fn bind_advice(source: &std::io::Error) -> &'static str {
    match source.kind() {
        std::io::ErrorKind::AddrInUse => {
            "choose another port (0 picks a free one) or stop the process holding it"
        }
        std::io::ErrorKind::PermissionDenied => {
            "this process may not bind that port (ports below net.ipv4.ip_unprivileged_port_start, \
             1024 by default, need privileges): choose a port of 1024 or above"
        }
        std::io::ErrorKind::AddrNotAvailable => {
            "that address is not on this host: listen on 127.0.0.1 or an address of one of its interfaces"
        }
        _ => "choose another address or port",
    }
}
