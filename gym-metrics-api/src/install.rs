//! The process-wide install and what it hands back: the [`Installation`],
//! the [`FleetSize`] capability, the declared [`role`]. The cell the
//! recorder lives in, and its three states, are in `cell.rs`.

use std::fmt;
use std::path::Path;

use crate::cell;
use crate::compiled_off::COMPILED_OFF;
use crate::recorder::Recorder;
use crate::{FileSdError, FleetTarget, Role};

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

/// The orchestrator's right to set `gym.servers.active` and to publish the
/// fleet's scrape targets ([`FleetSize::publish_targets`],
/// [`FleetSize::write_file_sd`]).
///
/// Only [`Installation::fleet_size`] on an orchestrator install creates one
/// (the role rule, [`Role::writes_fleet_size`]): a server install cannot
/// express either.
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
///
/// Code outside this crate cannot make one, so a server has no other way to it:
///
/// ```compile_fail
/// use gym_metrics_api::backend::NoopRecorder;
/// use gym_metrics_api::{FleetSize, Role};
/// let recorder: &'static NoopRecorder = Box::leak(Box::new(NoopRecorder::new(Role::server("s-0", "agent"))));
/// let forged = FleetSize { recorder }; // error: private field
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

    /// Publishes the fleet's scrape targets: the whole list, replacing the
    /// last one. On the Prometheus backend the orchestrator's endpoint serves
    /// it at `GET /sd` for `http_sd_configs`; a backend without an endpoint
    /// keeps nothing (use [`FleetSize::write_file_sd`]). Never fails, never
    /// blocks on a scraper.
    ///
    /// ```
    /// # use std::sync::Mutex;
    /// # use gym_metrics_api::backend::Recorder;
    /// # use gym_metrics_api::{install, FleetTarget, Role};
    /// # static SERVED: Mutex<String> = Mutex::new(String::new());
    /// # struct Sd(Role);
    /// # impl Recorder for Sd {
    /// #     fn role(&self) -> &Role { &self.0 }
    /// #     fn record_rollout_duration_ms(&self, _ms: f64) {}
    /// #     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    /// #     fn record_active_servers(&self, _n: u64) {}
    /// #     fn publish_fleet_targets(&self, t: &[FleetTarget]) { *SERVED.lock().unwrap() = FleetTarget::sd_json(t) }
    /// # }
    /// let fleet = install(Sd(Role::orchestrator())).unwrap().fleet_size().unwrap();
    /// let server = FleetTarget::of_process("127.0.0.1:9101", &Role::server("math-0", "resources"), Some("run-7"))?;
    /// fleet.publish_targets(&[server]);
    /// assert!(SERVED.lock().unwrap().contains("\"nemo_gym_server_name\":\"math-0\""));
    /// fleet.publish_targets(&[]); // the fleet is gone
    /// assert_eq!(*SERVED.lock().unwrap(), "[]");
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub fn publish_targets(&self, targets: &[FleetTarget]) {
        self.recorder.publish_fleet_targets(targets);
    }

    /// Publishes the processes the orchestrator launched: each server's
    /// [`Role`] and pid, the whole list, replacing the last one; list the
    /// exited ones too, as Gym does (a gone tree reads zero, its sampled
    /// peak kept). With NeMo Gym's memory profiling on
    /// (`NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED`), the backend samples their
    /// process trees and the host and exports Gym's memory gauges, as Gym's
    /// orchestrator does. Never fails; the sampling happens on the backend's
    /// own thread.
    ///
    /// ```
    /// # use std::sync::Mutex;
    /// # use gym_metrics_api::backend::Recorder;
    /// # use gym_metrics_api::{install, Role};
    /// # static PIDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    /// # struct Pids(Role);
    /// # impl Recorder for Pids {
    /// #     fn role(&self) -> &Role { &self.0 }
    /// #     fn record_rollout_duration_ms(&self, _ms: f64) {}
    /// #     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    /// #     fn record_active_servers(&self, _n: u64) {}
    /// #     fn publish_processes(&self, s: &[(Role, u32)]) { *PIDS.lock().unwrap() = s.iter().map(|p| p.1).collect() }
    /// # }
    /// let fleet = install(Pids(Role::orchestrator())).unwrap().fleet_size().unwrap();
    /// fleet.publish_processes(&[(Role::server("math-0", "resources_servers"), 4242)]);
    /// assert_eq!(*PIDS.lock().unwrap(), [4242]);
    /// ```
    pub fn publish_processes(&self, servers: &[(Role, u32)]) {
        if COMPILED_OFF {
            return;
        }
        self.recorder.publish_processes(servers);
    }

    /// Writes the fleet's scrape targets to `path` for `file_sd_configs`:
    /// the same JSON as `GET /sd`, replaced atomically (a temporary file
    /// beside it, renamed over it), so a reader never sees half a list.
    ///
    /// # Errors
    /// [`FileSdError`] naming the path when it cannot be written; the
    /// previous file stays as it was. Log it and carry on: the fleet does
    /// not depend on its discovery file.
    ///
    /// ```
    /// # use gym_metrics_api::backend::NoopRecorder;
    /// # use gym_metrics_api::{install, FleetTarget, Role};
    /// let fleet = install(NoopRecorder::new(Role::orchestrator())).unwrap().fleet_size().unwrap();
    /// let path = std::env::temp_dir().join(format!("gym-doc-{}.json", std::process::id()));
    /// fleet.write_file_sd(&[FleetTarget::new("127.0.0.1:9101")?], &path)?;
    /// assert_eq!(std::fs::read_to_string(&path)?, r#"[{"targets":["127.0.0.1:9101"],"labels":{}}]"#);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_file_sd(&self, targets: &[FleetTarget], path: &Path) -> Result<(), FileSdError> {
        crate::file_sd::write_file_sd(targets, path)
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
        f.write_str(ALREADY_INSTALLED)
    }
}

impl<R> std::error::Error for SetRecorderError<R> {}

/// What every "a recorder is already installed" error says, whichever
/// backend (or [`install`] itself) found the facade taken.
///
/// ```
/// assert!(gym_metrics_api::backend::ALREADY_INSTALLED.contains("once, at start-up"));
/// ```
pub const ALREADY_INSTALLED: &str = "a gym-metrics recorder is already installed in this process: \
     install one backend, once, at start-up (a backend's build() gives a recorder that is not installed)";
