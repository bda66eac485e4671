//! # gym-metrics-noop
//!
//! The no-op backend: it declares the process's role and records nothing,
//! and no backend crate (opentelemetry, prometheus, reqwest, tonic) is built.
//! It offers the same start-up shape as the real backends (`new()`,
//! `from_env()`, `role(..)`, `build()`, `install()`; a guard with
//! `fleet_size()` and `shutdown()`), so an application switches backend with
//! one Cargo feature and no code change.
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
//! let guard = NoopBuilder::from_env()?.role(Role::orchestrator()).install()?;
//! gym_metrics_api::record_verify(std::time::Duration::from_millis(5), true); // nothing recorded
//! assert!(gym_metrics_api::role().unwrap().is_orchestrator());
//! guard.fleet_size().unwrap().set(3); // accepted, nothing recorded
//! guard.shutdown()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

use gym_metrics_api::backend::NoopRecorder;
use gym_metrics_api::{install, FleetSize, Installation, Role};

use std::convert::Infallible;

/// Builds the no-op backend.
///
/// ```
/// use gym_metrics_api::backend::Recorder;
/// let (recorder, _guard) = gym_metrics_noop::NoopBuilder::new().build()?;
/// assert_eq!(recorder.role(), &gym_metrics_api::Role::default_server());
/// # Ok::<(), gym_metrics_noop::BuildError>(())
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
    /// A builder for the role every backend starts with
    /// ([`gym_metrics_api::Role::default_server`]).
    ///
    /// ```
    /// let b = gym_metrics_noop::NoopBuilder::new();
    /// assert!(format!("{b:?}").contains("name: \"server\""));
    /// ```
    pub fn new() -> Self {
        Self {
            role: gym_metrics_api::Role::default_server(),
        }
    }

    /// [`NoopBuilder::new`]: the no-op backend reads no variable, so it cannot
    /// fail. `NoopBuilder::from_env()?` still reads as every backend's does
    /// in a function returning `Box<dyn Error>` (the error type is
    /// [`Infallible`], which is why this crate needs no configuration error,
    /// and no kit, of its own).
    ///
    /// # Errors
    /// Never.
    ///
    /// ```
    /// std::env::set_var("OTEL_METRICS_EXPORTER", "console");
    /// let b = gym_metrics_noop::NoopBuilder::from_env()?; // reads none of it
    /// assert_eq!(format!("{b:?}"), format!("{:?}", gym_metrics_noop::NoopBuilder::new()));
    /// # Ok::<(), std::convert::Infallible>(())
    /// ```
    pub fn from_env() -> Result<Self, Infallible> {
        Ok(Self::new())
    }

    /// Declares the process's role.
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// let b = gym_metrics_noop::NoopBuilder::new().role(gym_metrics_api::Role::orchestrator());
    /// let (recorder, _guard) = b.build().unwrap();
    /// assert!(recorder.role().is_orchestrator());
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// The no-op recorder and a guard, without installing anything: the
    /// recorder is yours to call (or to install).
    ///
    /// # Errors
    /// None in this backend; the type is the one `install` returns.
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// let (recorder, guard) = gym_metrics_noop::NoopBuilder::new().build()?;
    /// recorder.record_verify_ms(40.0, true); // nothing recorded
    /// assert!(guard.fleet_size().is_none()); // nothing installed
    /// # Ok::<(), gym_metrics_noop::BuildError>(())
    /// ```
    pub fn build(self) -> Result<(NoopRecorder, NoopGuard), BuildError> {
        Ok((
            NoopRecorder::new(self.role),
            NoopGuard { installation: None },
        ))
    }

    /// Installs the no-op recorder (so the role is declared, as with any backend).
    ///
    /// # Errors
    /// [`BuildError::AlreadyInstalled`] when a recorder is already installed.
    ///
    /// ```
    /// let g = gym_metrics_noop::NoopBuilder::new().install()?;
    /// assert!(gym_metrics_noop::NoopBuilder::new().install().is_err()); // once per process
    /// g.shutdown()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn install(self) -> Result<NoopGuard, BuildError> {
        let (recorder, _) = self.build()?;
        let installation = install(recorder).map_err(|_| BuildError::AlreadyInstalled)?;
        Ok(NoopGuard {
            installation: Some(installation),
        })
    }
}

/// The no-op backend could not be started.
///
/// ```
/// let e = gym_metrics_noop::BuildError::AlreadyInstalled;
/// assert_eq!(e.to_string(), gym_metrics_api::backend::ALREADY_INSTALLED);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A gym-metrics recorder is already installed in this process.
    #[error("{}", gym_metrics_api::backend::ALREADY_INSTALLED)]
    AlreadyInstalled,
}

/// The no-op backend's shutdown cannot fail: this enum has no value. It
/// exists so that [`NoopGuard::shutdown`] has the real backends' signature.
///
/// ```
/// fn never(e: gym_metrics_noop::ShutdownError) -> ! {
///     match e {}
/// }
/// let guard = gym_metrics_noop::NoopBuilder::new().install()?;
/// match guard.shutdown() {
///     Ok(()) => {}
///     Err(e) => never(e), // no value to handle
/// }
/// # Ok::<(), gym_metrics_noop::BuildError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShutdownError {}

/// What [`NoopBuilder::install`] returns; has the same methods as the real backends' guards.
///
/// ```
/// let g = gym_metrics_noop::NoopBuilder::new().install().unwrap();
/// assert!(g.fleet_size().is_none());
/// ```
#[derive(Debug)]
pub struct NoopGuard {
    installation: Option<Installation>,
}

impl NoopGuard {
    /// The fleet-size capability: `Some` only when this guard installed an
    /// orchestrator recorder.
    ///
    /// ```
    /// # use gym_metrics_api::Role;
    /// let g = gym_metrics_noop::NoopBuilder::new().role(Role::orchestrator()).install().unwrap();
    /// assert!(g.fleet_size().is_some());
    /// ```
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.installation.and_then(|i| i.fleet_size())
    }

    /// Nothing to flush; returns at once and never fails.
    ///
    /// # Errors
    /// None: [`ShutdownError`] has no value.
    ///
    /// ```
    /// gym_metrics_noop::NoopBuilder::new().install().unwrap().shutdown()?;
    /// # Ok::<(), gym_metrics_noop::ShutdownError>(())
    /// ```
    pub fn shutdown(self) -> Result<(), ShutdownError> {
        Ok(())
    }
}
