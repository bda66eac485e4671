//! The process-wide install: a three-state atomic, as in `log`, so that exactly
//! one recorder wins and reading it costs one atomic load and a branch.

use std::fmt;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::{Recorder, Role};

const UNINITIALIZED: usize = 0;
const INITIALIZING: usize = 1;
const INITIALIZED: usize = 2;

static STATE: AtomicUsize = AtomicUsize::new(UNINITIALIZED);
/// A leaked `Box<Box<dyn Recorder>>`: a thin pointer, null until installed,
/// never freed once set.
static RECORDER: AtomicPtr<Box<dyn Recorder>> = AtomicPtr::new(std::ptr::null_mut());

/// The installed recorder, if any. One atomic load and a branch.
#[inline(always)]
pub(crate) fn installed() -> Option<&'static dyn Recorder> {
    let ptr = RECORDER.load(Ordering::Acquire);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a non-null pointer was stored exactly once by `install` from a
    // leaked box, which is never freed, and the acquire load above pairs with
    // the release store there, so the recorder is fully initialised.
    Some(unsafe { &**ptr })
}

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
/// use gym_metrics_api::{install, NoopRecorder, Role};
/// let installation = install(NoopRecorder::new(Role::orchestrator()))?;
/// assert!(installation.fleet_size().is_some());
/// let again = install(NoopRecorder::new(Role::orchestrator())).unwrap_err();
/// let _recorder_back: NoopRecorder = again.into_inner();
/// # Ok::<(), gym_metrics_api::SetRecorderError<NoopRecorder>>(())
/// ```
pub fn install<R: Recorder>(recorder: R) -> Result<Installation, SetRecorderError<R>> {
    if STATE
        .compare_exchange(
            UNINITIALIZED,
            INITIALIZING,
            Ordering::Acquire,
            Ordering::Relaxed,
        )
        .is_err()
    {
        return Err(SetRecorderError(recorder));
    }
    let boxed: Box<dyn Recorder> = Box::new(recorder);
    let ptr = Box::into_raw(Box::new(boxed));
    RECORDER.store(ptr, Ordering::Release);
    STATE.store(INITIALIZED, Ordering::Release);
    // SAFETY: `ptr` was just leaked from a box and is never freed.
    let recorder: &'static dyn Recorder = unsafe { &**ptr };
    Ok(Installation { recorder })
}

/// The role declared at install, or `None` before any install.
///
/// ```
/// // Nothing is installed in this doc test's process.
/// assert!(gym_metrics_api::role().is_none());
/// ```
pub fn role() -> Option<&'static Role> {
    installed().map(|r| r.role())
}

/// What a successful [`install`] returns.
///
/// ```
/// use gym_metrics_api::{install, NoopRecorder, Role};
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
    /// # use gym_metrics_api::{install, NoopRecorder, Role};
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
    /// # use gym_metrics_api::{install, NoopRecorder, Role};
    /// let i = install(NoopRecorder::new(Role::orchestrator())).unwrap();
    /// i.fleet_size().expect("orchestrator").set(4);
    /// ```
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.role().is_orchestrator().then_some(FleetSize {
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
/// # use gym_metrics_api::{install, NoopRecorder, Role};
/// let fleet = install(NoopRecorder::new(Role::orchestrator())).unwrap().fleet_size().unwrap();
/// fleet.set(3);
/// fleet.set(0); // at shutdown
/// ```
#[derive(Clone, Copy)]
pub struct FleetSize {
    recorder: &'static dyn Recorder,
}

impl FleetSize {
    /// Sets the fleet size. Never fails, never blocks.
    ///
    /// ```
    /// # use gym_metrics_api::{install, NoopRecorder, Role};
    /// # let fleet = install(NoopRecorder::new(Role::orchestrator())).unwrap().fleet_size().unwrap();
    /// fleet.set(2);
    /// ```
    #[inline]
    pub fn set(&self, count: u64) {
        if crate::compiled_off::COMPILED_OFF {
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
/// use gym_metrics_api::{install, NoopRecorder, Role};
/// let _ = install(NoopRecorder::new(Role::orchestrator()));
/// let err = install(NoopRecorder::new(Role::orchestrator())).unwrap_err();
/// assert!(err.to_string().contains("already installed"));
/// ```
pub struct SetRecorderError<R>(pub R);

impl<R> SetRecorderError<R> {
    /// The recorder that was not installed.
    ///
    /// ```
    /// # use gym_metrics_api::{install, NoopRecorder, Role};
    /// # let _ = install(NoopRecorder::new(Role::orchestrator()));
    /// let back = install(NoopRecorder::new(Role::orchestrator())).unwrap_err().into_inner();
    /// # let _ = back;
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
        f.write_str(crate::ALREADY_INSTALLED)
    }
}

impl<R> std::error::Error for SetRecorderError<R> {}
