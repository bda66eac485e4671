//! The one place that knows which backend this build records into.
//!
//! Exactly one Cargo feature picks it: `noop` wins over everything (so
//! `--all-features` still builds), then `prom`, then `otel`. Every backend
//! starts the same way (`from_env()?.role(..).install()?`, a guard with
//! `fleet_size()` and `shutdown()`), so all this module switches is the
//! builder and what only prom has: the address it serves `/metrics` on and
//! the exposition it can read back. `src/bin/simple.rs` shows each
//! backend's start-up written out.

use std::error::Error;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::fleet::scrape_config::ScrapeSecurity;

use gym_metrics_api::{FleetSize, Role};

/// Reads back this process's own metrics, where the backend can.
///
/// On `prom` it renders the Prometheus text exposition the process serves; on
/// `otel` and `noop` there is nothing local to read and it returns `None`.
pub struct MetricsReader {
    #[cfg(all(feature = "prom", not(feature = "noop")))]
    handle: gym_metrics_prom::PrometheusHandle,
}

impl MetricsReader {
    /// The text exposition of this process's metrics, if the backend keeps one.
    pub fn render(&self) -> Option<String> {
        #[cfg(all(feature = "prom", not(feature = "noop")))]
        return Some(self.handle.render());
        #[cfg(not(all(feature = "prom", not(feature = "noop"))))]
        None
    }
}

/// The installed backend: keep it alive for the life of the process, then
/// [`BackendGuard::shutdown`] it to flush.
pub struct BackendGuard {
    inner: imp::Guard,
}

impl BackendGuard {
    /// The fleet-size capability: `Some` on an orchestrator install only.
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.inner.fleet_size()
    }

    /// Where this process serves `/metrics`, when the backend is scraped.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        imp::metrics_addr(&self.inner)
    }

    /// A reader of this process's own metrics.
    pub fn reader(&self) -> MetricsReader {
        imp::reader(&self.inner)
    }

    /// Flushes and stops the backend: on prom, after one more scrape (at
    /// most the `final_scrape_wait` given at install); on otel, after the
    /// final export.
    ///
    /// # Errors
    /// The backend could not flush (e.g. the OTLP collector is unreachable).
    /// A final scrape that did not come is not one: a demo run without a
    /// Prometheus has no scraper to wait for, so it is logged at info level.
    pub fn shutdown(self) -> Result<(), Box<dyn Error>> {
        imp::shutdown(self.inner)
    }
}

/// The backend this binary was built with: `prom`, `otel` or `noop`.
pub const NAME: &str = imp::NAME;

/// True when every process serves its own `/metrics` to be scraped.
pub const SERVES_METRICS: bool = imp::SERVES_METRICS;

/// Installs this build's backend for `role`; on `prom` it serves `/metrics`
/// on `metrics_addr` (port 0 picks a free one), by the web configuration
/// `web_config` (TLS, basic auth) when given, and, when
/// `final_scrape_wait` is not zero, keeps serving at shutdown until one more
/// scrape has read the last values (at most that long). Other backends
/// ignore the address and wait (they flush at shutdown) and refuse a web
/// configuration.
///
/// # Errors
/// The backend's configuration (environment, web configuration) is invalid,
/// the address is taken, or a backend is already installed in this process.
pub fn install(
    role: Role,
    metrics_addr: SocketAddr,
    final_scrape_wait: Duration,
    web_config: Option<&Path>,
) -> Result<BackendGuard, Box<dyn Error>> {
    let inner = imp::builder(metrics_addr, final_scrape_wait, web_config)?
        .role(role)
        .install()?;
    Ok(BackendGuard { inner })
}

/// What a launched child's environment needs so that its `/metrics` serves
/// by `web_config` too (prom: `GYM_METRICS_WEB_CONFIG_FILE`).
pub fn child_env(web_config: Option<&Path>) -> Vec<(&'static str, OsString)> {
    imp::child_env(web_config)
}

/// How Prometheus must scrape processes served by `web_config`: https
/// trusting `ca_file` (default: the configuration's own certificate, as if
/// self-signed) when it has TLS; basic auth as its first user with the
/// password in `password_file` when it has users.
///
/// # Errors
/// The web configuration cannot be read, it has users and no
/// `password_file` was given, or this backend serves no `/metrics`.
pub fn scrape_security(
    web_config: &Path,
    ca_file: Option<&Path>,
    password_file: Option<&Path>,
) -> Result<ScrapeSecurity, Box<dyn Error>> {
    imp::scrape_security(web_config, ca_file, password_file)
}

/// `https` when `web_config` serves TLS, else `http`.
pub fn scheme(web_config: Option<&Path>) -> &'static str {
    imp::scheme(web_config)
}

/// The error every backend but prom gives a web configuration.
#[cfg_attr(all(feature = "prom", not(feature = "noop")), allow(dead_code))]
fn no_web_config(web_config: &Path) -> Box<dyn Error> {
    format!(
        "--web-config {}: this gym-fleet is built with the {} backend, which serves no /metrics (build with the default `prom` feature)",
        web_config.display(),
        imp::NAME
    )
    .into()
}

/// What a backend that serves no `/metrics` (noop, otel) answers for the
/// scrape-only parts of the switch: no child variables, plain `http`, a web
/// configuration refused, nothing to read back. One definition for both.
#[cfg(any(feature = "noop", not(feature = "prom")))]
mod unscraped {
    use super::*;

    pub fn child_env(_: Option<&Path>) -> Vec<(&'static str, OsString)> {
        Vec::new()
    }

    pub fn scheme(_: Option<&Path>) -> &'static str {
        "http"
    }

    pub fn scrape_security(
        web_config: &Path,
        _: Option<&Path>,
        _: Option<&Path>,
    ) -> Result<ScrapeSecurity, Box<dyn Error>> {
        Err(no_web_config(web_config))
    }

    pub fn metrics_addr<G>(_guard: &G) -> Option<SocketAddr> {
        None
    }

    pub fn reader<G>(_guard: &G) -> MetricsReader {
        MetricsReader {}
    }
}

#[cfg(feature = "noop")]
mod imp {
    use super::*;
    use gym_metrics_noop::NoopBuilder;

    pub const NAME: &str = "noop";
    pub const SERVES_METRICS: bool = false;
    pub type Guard = gym_metrics_noop::NoopGuard;

    pub fn builder(
        _: SocketAddr,
        _: Duration,
        web_config: Option<&Path>,
    ) -> Result<NoopBuilder, Box<dyn Error>> {
        if let Some(file) = web_config {
            return Err(no_web_config(file));
        }
        Ok(NoopBuilder::from_env()?)
    }

    pub use super::unscraped::{child_env, metrics_addr, reader, scheme, scrape_security};

    pub fn shutdown(guard: Guard) -> Result<(), Box<dyn Error>> {
        Ok(guard.shutdown()?)
    }
}

#[cfg(all(feature = "prom", not(feature = "noop")))]
mod imp {
    use super::*;
    use gym_metrics_prom::{ConfigError, PrometheusBuilder};

    pub const NAME: &str = "prom";
    pub const SERVES_METRICS: bool = true;
    pub type Guard = gym_metrics_prom::PrometheusGuard;

    pub fn builder(
        metrics_addr: SocketAddr,
        final_scrape_wait: Duration,
        web_config: Option<&Path>,
    ) -> Result<PrometheusBuilder, ConfigError> {
        let mut builder = PrometheusBuilder::from_env()?
            .with_http_listener(metrics_addr)
            .with_metrics_bridge(gym_metrics_prom::MetricsBridgeOptions::new())
            .with_process_metrics();
        if let Some(file) = web_config {
            builder = builder.web_config_file(file);
        }
        Ok(if final_scrape_wait.is_zero() {
            builder
        } else {
            builder.final_scrape_wait(final_scrape_wait)
        })
    }

    pub fn child_env(web_config: Option<&Path>) -> Vec<(&'static str, OsString)> {
        web_config
            .map(|file| (gym_metrics_prom::WEB_CONFIG_FILE_VAR, file.into()))
            .into_iter()
            .collect()
    }

    pub fn scheme(web_config: Option<&Path>) -> &'static str {
        let tls = web_config
            .and_then(|file| gym_metrics_prom::WebConfig::load(file).ok())
            .is_some_and(|web| web.tls_cert_file().is_some());
        if tls {
            "https"
        } else {
            "http"
        }
    }

    pub fn scrape_security(
        web_config: &Path,
        ca_file: Option<&Path>,
        password_file: Option<&Path>,
    ) -> Result<ScrapeSecurity, Box<dyn Error>> {
        let web = gym_metrics_prom::WebConfig::load(web_config)?;
        let tls_ca_file = web
            .tls_cert_file()
            .map(|cert| ca_file.unwrap_or(cert).to_path_buf());
        let basic_auth = match (web.basic_auth_users().next(), password_file) {
            (None, _) => None,
            (Some(user), Some(file)) => Some((user.to_string(), file.to_path_buf())),
            (Some(user), None) => {
                return Err(format!(
                    "--prometheus-config with --web-config {}: its basic_auth_users hold only hashes, so name the file holding {user}'s password with --scrape-password-file",
                    web_config.display()
                )
                .into())
            }
        };
        Ok(ScrapeSecurity {
            tls_ca_file,
            basic_auth,
        })
    }

    pub fn shutdown(guard: Guard) -> Result<(), Box<dyn Error>> {
        match guard.shutdown() {
            Err(e @ gym_metrics_prom::ShutdownError::FinalScrapeMissed { .. }) => {
                log::info!(target: "gym_fleet", "{e}");
                Ok(())
            }
            other => Ok(other?),
        }
    }

    pub fn metrics_addr(guard: &Guard) -> Option<SocketAddr> {
        Some(guard.local_addr())
    }

    pub fn reader(guard: &Guard) -> MetricsReader {
        MetricsReader {
            handle: guard.handle(),
        }
    }
}

#[cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]
mod imp {
    use super::*;
    use gym_metrics_otel::OtelBuilder;

    pub const NAME: &str = "otel";
    pub const SERVES_METRICS: bool = false;
    pub type Guard = gym_metrics_otel::OtelGuard;

    pub fn builder(
        _: SocketAddr,
        _: Duration,
        web_config: Option<&Path>,
    ) -> Result<OtelBuilder, Box<dyn Error>> {
        if let Some(file) = web_config {
            return Err(no_web_config(file));
        }
        Ok(OtelBuilder::from_env()?
            .with_metrics_bridge(gym_metrics_otel::MetricsBridgeOptions::new())
            .with_process_metrics())
    }

    pub use super::unscraped::{child_env, metrics_addr, reader, scheme, scrape_security};

    pub fn shutdown(guard: Guard) -> Result<(), Box<dyn Error>> {
        Ok(guard.shutdown()?)
    }
}

#[cfg(not(any(feature = "prom", feature = "otel", feature = "noop")))]
compile_error!("gym-metrics-examples needs one backend feature: prom (default), otel or noop");
