//! # gym-metrics-noop
//!
//! The no-op backend: it declares the process's role and records nothing,
//! and no backend crate (opentelemetry, prometheus, reqwest, tonic) is built.
//! It offers the same start-up shape as the real backends, so an application
//! switches backend with one Cargo feature and no code change.
//!
//! To compile every record call to nothing as well (no atomic load, no
//! branch), the **application** turns on `gym-metrics-api/off` in the same
//! feature that selects this crate, as `log`'s `max_level_off` is set:
//!
//! ```toml
//! [features]
//! noop = ["dep:gym-metrics-noop", "gym-metrics-api/off"]
//! ```
//!
//! This crate never turns `off` on itself: Cargo unifies features across a
//! build, so a library that did would silence the prom and otel backends of
//! every workspace-wide build (`cargo build`, `cargo test --workspace`).
//!
//! ```
//! use gym_metrics_noop::NoopBuilder;
//! use gym_metrics_api::Role;
//!
//! let guard = NoopBuilder::new().role(Role::orchestrator()).install().unwrap();
//! gym_metrics_api::record_verify(std::time::Duration::from_millis(5), true); // nothing recorded
//! assert!(gym_metrics_api::role().unwrap().is_orchestrator());
//! guard.fleet_size().unwrap().set(3); // accepted, nothing recorded
//! ```
#![deny(missing_docs)]

use gym_metrics_api::backend::NoopRecorder;
use gym_metrics_api::{install, FleetSize, Installation, Role, SetRecorderError};

/// Builds the no-op backend.
///
/// ```
/// let b = gym_metrics_noop::NoopBuilder::new();
/// # let _ = b;
/// ```
#[derive(Debug, Clone)]
pub struct NoopBuilder {
    role: Role,
}

impl Default for NoopBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl NoopBuilder {
    /// A builder for a server named after the process, like the real backends' default.
    ///
    /// ```
    /// let _ = gym_metrics_noop::NoopBuilder::new();
    /// ```
    pub fn new() -> Self {
        Self {
            role: Role::server("server", "server"),
        }
    }

    /// Declares the process's role.
    ///
    /// ```
    /// let _ = gym_metrics_noop::NoopBuilder::new().role(gym_metrics_api::Role::orchestrator());
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// Installs the no-op recorder (so the role is declared, as with any backend).
    ///
    /// # Errors
    /// A recorder is already installed.
    ///
    /// ```
    /// let g = gym_metrics_noop::NoopBuilder::new().install().unwrap();
    /// g.shutdown();
    /// ```
    pub fn install(self) -> Result<NoopGuard, SetRecorderError<NoopRecorder>> {
        let installation = install(NoopRecorder::new(self.role))?;
        Ok(NoopGuard { installation })
    }
}

/// What [`NoopBuilder::install`] returns; has the same methods as the real backends' guards.
///
/// ```
/// let g = gym_metrics_noop::NoopBuilder::new().install().unwrap();
/// assert!(g.fleet_size().is_none());
/// ```
#[derive(Debug)]
pub struct NoopGuard {
    installation: Installation,
}

impl NoopGuard {
    /// The fleet-size capability, for an orchestrator install.
    ///
    /// ```
    /// # use gym_metrics_api::Role;
    /// let g = gym_metrics_noop::NoopBuilder::new().role(Role::orchestrator()).install().unwrap();
    /// assert!(g.fleet_size().is_some());
    /// ```
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.installation.fleet_size()
    }

    /// Nothing to flush; returns at once.
    ///
    /// ```
    /// gym_metrics_noop::NoopBuilder::new().install().unwrap().shutdown();
    /// ```
    pub fn shutdown(self) {}
}
