//! The process-wide install and what it hands back: the [`Installation`],
//! the [`FleetSize`] capability, the declared [`role`]. The cell the
//! recorder lives in, and its three states, are in `cell.rs`.

use std::fmt;

use crate::cell;
use crate::compiled_off::COMPILED_OFF;
use crate::recorder::Recorder;
use crate::Role;

/// Installs `recorder` as the process-wide backend. Succeeds once per process.
///
/// The recorder's [`Role`] is the process's role from then on. An orchestrator
/// install yields the [`FleetSize`] capability; a server install cannot.
///
/// # Errors
/// A second install (also a concurrent one that lost) returns
/// [`SetRecorderError`], which hands the rejected recorder back.
///
/// ```
/// use gym_metrics_api::backend::{NoopRecorder, Recorder};
/// use gym_metrics_api::{install, Role};
/// let installation = install(NoopRecorder::new(Role::orchestrator()))?;
/// assert!(installation.fleet_size().is_some());
/// let again = install(NoopRecorder::new(Role::server("late-0", "agent"))).unwrap_err();
/// let rejected: NoopRecorder = again.into_inner();
/// assert_eq!(rejected.role().name(), "late-0"); // handed back
/// assert!(gym_metrics_api::role().unwrap().is_orchestrator()); // the first stays
/// # Ok::<(), gym_metrics_api::SetRecorderError<NoopRecorder>>(())
/// ```
pub fn install<R: Recorder>(recorder: R) -> Result<Installation, SetRecorderError<R>> {
    let recorder = cell::set(recorder).map_err(SetRecorderError)?;
    Ok(Installation { recorder })
}

/// The role declared at install, or `None` before any install.
///
/// ```
/// // Nothing is installed in this doc test's process.
/// assert!(gym_metrics_api::role().is_none());
/// ```
pub fn role() -> Option<&'static Role> {
    cell::installed().map(|r| r.role())
}

/// What a successful [`install`] returns.
///
/// ```
/// use gym_metrics_api::backend::NoopRecorder;
/// use gym_metrics_api::{install, Role};
/// let installation = install(NoopRecorder::new(Role::server("s-0", "resources"))).unwrap();
/// assert!(installation.fleet_size().is_none()); // servers cannot write the fleet size
/// assert_eq!(installation.role().name(), "s-0");
/// ```
#[derive(Clone, Copy)]
pub struct Installation {
    recorder: &'static dyn Recorder,
}

impl Installation {
    /// The role this process declared.
    ///
    /// ```
    /// # use gym_metrics_api::backend::NoopRecorder;
    /// # use gym_metrics_api::{install, Role};
    /// let i = install(NoopRecorder::new(Role::orchestrator())).unwrap();
    /// assert!(i.role().is_orchestrator());
    /// ```
    pub fn role(&self) -> &'static Role {
        self.recorder.role()
    }

    /// The capability to write `gym.servers.active`: `Some` for an
    /// orchestrator install only, so server code cannot even express the call.
    ///
    /// ```
    /// # use gym_metrics_api::backend::NoopRecorder;
    /// # use gym_metrics_api::{install, Role};
    /// let i = install(NoopRecorder::new(Role::orchestrator())).unwrap();
    /// assert!(i.role().writes_fleet_size());
    /// assert!(i.fleet_size().is_some());
    /// ```
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.role().writes_fleet_size().then_some(FleetSize {
            recorder: self.recorder,
        })
    }
}

impl fmt::Debug for Installation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Installation")
            .field("role", self.role())
            .finish()
    }
}

/// The orchestrator's right to set `gym.servers.active`.
///
/// Only [`Installation::fleet_size`] on an orchestrator install creates one.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use gym_metrics_api::backend::Recorder;
/// use gym_metrics_api::{install, Role};
/// static EXPORTED: AtomicU64 = AtomicU64::new(u64::MAX);
/// struct Gauge(Role);
/// impl Recorder for Gauge {
///     fn role(&self) -> &Role { &self.0 }
///     fn record_rollout_duration_ms(&self, _ms: f64) {}
///     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
///     fn record_active_servers(&self, n: u64) { EXPORTED.store(n, Ordering::Relaxed) }
/// }
/// let fleet = install(Gauge(Role::orchestrator())).unwrap().fleet_size().unwrap();
/// fleet.set(3);
/// assert_eq!(EXPORTED.load(Ordering::Relaxed), 3);
/// fleet.set(0); // at shutdown
/// assert_eq!(EXPORTED.load(Ordering::Relaxed), 0);
/// ```
#[derive(Clone, Copy)]
pub struct FleetSize {
    recorder: &'static dyn Recorder,
}

impl FleetSize {
    /// Sets the fleet size. Never fails, never blocks.
    ///
    /// ```
    /// # use std::sync::atomic::{AtomicU64, Ordering};
    /// # use gym_metrics_api::backend::Recorder;
    /// # use gym_metrics_api::{install, Role};
    /// # static EXPORTED: AtomicU64 = AtomicU64::new(0);
    /// # struct Gauge(Role);
    /// # impl Recorder for Gauge {
    /// #     fn role(&self) -> &Role { &self.0 }
    /// #     fn record_rollout_duration_ms(&self, _ms: f64) {}
    /// #     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    /// #     fn record_active_servers(&self, n: u64) { EXPORTED.store(n, Ordering::Relaxed) }
    /// # }
    /// # let fleet = install(Gauge(Role::orchestrator())).unwrap().fleet_size().unwrap();
    /// fleet.set(2);
    /// assert_eq!(EXPORTED.load(Ordering::Relaxed), 2); // what the backend's gauge now holds
    /// ```
    #[inline]
    pub fn set(&self, count: u64) {
        if COMPILED_OFF {
            return;
        }
        self.recorder.record_active_servers(count);
    }
}

impl fmt::Debug for FleetSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FleetSize")
    }
}

/// A recorder was already installed; the rejected one is handed back.
///
/// ```
/// use gym_metrics_api::backend::NoopRecorder;
/// use gym_metrics_api::{install, Role};
/// install(NoopRecorder::new(Role::orchestrator())).unwrap();
/// let err = install(NoopRecorder::new(Role::orchestrator())).unwrap_err();
/// assert!(err.to_string().contains("already installed"));
/// ```
pub struct SetRecorderError<R>(pub R);

impl<R> SetRecorderError<R> {
    /// The recorder that was not installed.
    ///
    /// ```
    /// # use gym_metrics_api::backend::{NoopRecorder, Recorder};
    /// # use gym_metrics_api::{install, Role};
    /// install(NoopRecorder::new(Role::orchestrator())).unwrap();
    /// let back = install(NoopRecorder::new(Role::server("s-1", "resources"))).unwrap_err().into_inner();
    /// assert_eq!(back.role().name(), "s-1");
    /// ```
    pub fn into_inner(self) -> R {
        self.0
    }
}

impl<R> fmt::Debug for SetRecorderError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetRecorderError").finish_non_exhaustive()
    }
}

impl<R> fmt::Display for SetRecorderError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::backend_consts::ALREADY_INSTALLED)
    }
}

impl<R> std::error::Error for SetRecorderError<R> {}
