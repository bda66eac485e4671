#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
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
    /// // OTEL_METRICS_EXPORTER=console in the process environment
    /// # // SAFETY: the example has not started a thread yet.
    /// # unsafe { std::env::set_var("OTEL_METRICS_EXPORTER", "console") };
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
#[non_exhaustive]
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
