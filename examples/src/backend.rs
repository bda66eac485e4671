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
use std::net::SocketAddr;
use std::time::Duration;

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
/// on `metrics_addr` (port 0 picks a free one) and, when
/// `final_scrape_wait` is not zero, keeps serving at shutdown until one more
/// scrape has read the last values (at most that long). Other backends
/// ignore both (they flush at shutdown).
///
/// # Errors
/// The backend's configuration (environment) is invalid, the address is taken,
/// or a backend is already installed in this process.
pub fn install(
    role: Role,
    metrics_addr: SocketAddr,
    final_scrape_wait: Duration,
) -> Result<BackendGuard, Box<dyn Error>> {
    let inner = imp::builder(metrics_addr, final_scrape_wait)?
        .role(role)
        .install()?;
    Ok(BackendGuard { inner })
}

#[cfg(feature = "noop")]
mod imp {
    use super::*;
    use gym_metrics_noop::{ConfigError, NoopBuilder};

    pub const NAME: &str = "noop";
    pub const SERVES_METRICS: bool = false;
    pub type Guard = gym_metrics_noop::NoopGuard;

    pub fn builder(_: SocketAddr, _: Duration) -> Result<NoopBuilder, ConfigError> {
        NoopBuilder::from_env()
    }

    pub fn shutdown(guard: Guard) -> Result<(), Box<dyn Error>> {
        Ok(guard.shutdown()?)
    }

    pub fn metrics_addr(_guard: &Guard) -> Option<SocketAddr> {
        None
    }

    pub fn reader(_guard: &Guard) -> MetricsReader {
        MetricsReader {}
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
    ) -> Result<PrometheusBuilder, ConfigError> {
        let builder = PrometheusBuilder::from_env()?.with_http_listener(metrics_addr);
        Ok(if final_scrape_wait.is_zero() {
            builder
        } else {
            builder.final_scrape_wait(final_scrape_wait)
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
    use gym_metrics_otel::{ConfigError, OtelBuilder};

    pub const NAME: &str = "otel";
    pub const SERVES_METRICS: bool = false;
    pub type Guard = gym_metrics_otel::OtelGuard;

    pub fn builder(_: SocketAddr, _: Duration) -> Result<OtelBuilder, ConfigError> {
        OtelBuilder::from_env()
    }

    pub fn shutdown(guard: Guard) -> Result<(), Box<dyn Error>> {
        Ok(guard.shutdown()?)
    }

    pub fn metrics_addr(_guard: &Guard) -> Option<SocketAddr> {
        None
    }

    pub fn reader(_guard: &Guard) -> MetricsReader {
        MetricsReader {}
    }
}

#[cfg(not(any(feature = "prom", feature = "otel", feature = "noop")))]
compile_error!("gym-metrics-examples needs one backend feature: prom (default), otel or noop");
