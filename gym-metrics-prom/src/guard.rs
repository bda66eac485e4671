//! What [`crate::PrometheusBuilder::install`] returns: the running endpoint.

use std::net::SocketAddr;

use gym_metrics_api::{FleetSize, Installation};

use crate::endpoint::{Endpoint, EndpointStats};
use crate::error::ShutdownError;
use crate::handle::PrometheusHandle;

/// The installed backend and its running `/metrics` endpoint. Dropping it (or
/// calling [`PrometheusGuard::shutdown`]) stops the listener and frees the
/// port, after a final scrape when [`crate::PrometheusBuilder::final_scrape_wait`]
/// asks for one; the recorder stays installed (a facade install is for the
/// process's life).
///
/// ```no_run
/// let guard = gym_metrics_prom::PrometheusBuilder::new()
///     .role(gym_metrics_api::Role::orchestrator())
///     .with_http_listener(([127, 0, 0, 1], 0))
///     .install()?;
/// if let Some(fleet) = guard.fleet_size() {
///     fleet.set(4);
/// }
/// println!("{}", guard.handle().render());
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
#[derive(Debug)]
pub struct PrometheusGuard {
    /// `None` when a Gym setting (`NEMO_GYM_OTEL_ENABLED=false`, ...)
    /// silenced the backend: installed, nothing listening.
    endpoint: Option<Endpoint>,
    handle: PrometheusHandle,
    installation: Installation,
}

impl PrometheusGuard {
    pub(crate) fn new(
        endpoint: Option<Endpoint>,
        handle: PrometheusHandle,
        installation: Installation,
    ) -> Self {
        Self {
            endpoint,
            handle,
            installation,
        }
    }

    /// The address actually bound (the chosen port when 0 was asked for);
    /// `0.0.0.0:0` when a NeMo Gym setting (`NEMO_GYM_OTEL_ENABLED=false`,
    /// `…_METRICS_ENABLED=false`) kept the backend from listening.
    ///
    /// ```
    /// # let guard = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0)).install()?;
    /// assert_ne!(guard.local_addr().port(), 0);
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn local_addr(&self) -> SocketAddr {
        self.endpoint
            .as_ref()
            .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), Endpoint::local_addr)
    }

    /// Whether `/metrics` is served: false when a NeMo Gym setting
    /// (`NEMO_GYM_OTEL_ENABLED=false`, `…_METRICS_ENABLED=false`) silenced
    /// the backend.
    ///
    /// ```
    /// # let guard = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0)).install()?;
    /// assert!(guard.is_serving());
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn is_serving(&self) -> bool {
        self.endpoint.is_some()
    }

    /// A handle rendering the same exposition the endpoint serves.
    ///
    /// ```
    /// # let guard = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0)).install()?;
    /// assert!(guard.handle().render().contains("target_info"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn handle(&self) -> PrometheusHandle {
        self.handle.clone()
    }

    /// The capability to set `gym.servers.active`: `Some` for the orchestrator only.
    ///
    /// ```
    /// # let guard = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0)).install()?;
    /// assert!(guard.fleet_size().is_none()); // the default role is a server
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.installation.fleet_size()
    }

    /// What the endpoint did to stay within its connection limits so far.
    ///
    /// ```
    /// # let guard = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0)).install()?;
    /// let stats = guard.endpoint_stats();
    /// assert_eq!(stats.open_connections, 0);
    /// assert!(stats.open_connections <= stats.max_connections);
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn endpoint_stats(&self) -> EndpointStats {
        self.endpoint
            .as_ref()
            .map_or_else(EndpointStats::default, Endpoint::stats)
    }

    /// Stops the listener and waits for its thread; the port is free on
    /// return. With [`crate::PrometheusBuilder::final_scrape_wait`] it first
    /// serves on until one more scrape, rendered after this call, has been
    /// written out in full, or the wait runs out (then up to 1 s more for
    /// answers in progress). Dropping the guard does the same and logs the
    /// error instead.
    ///
    /// # Errors
    /// [`ShutdownError::FinalScrapeMissed`]: a final scrape was awaited and
    /// none came; [`ShutdownError::EndpointPanicked`]: the endpoint's thread
    /// had panicked. The port is free in every case.
    ///
    /// ```
    /// # let guard = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0)).install()?;
    /// let addr = guard.local_addr();
    /// guard.shutdown()?;
    /// assert!(std::net::TcpListener::bind(addr).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shutdown(mut self) -> Result<(), ShutdownError> {
        self.endpoint.as_mut().map_or(Ok(()), Endpoint::stop)
    }
}
