//! The one install sequence of every backend's `install` (and the
//! Prometheus backend's `install_recorder`): refuse a program built with
//! the API's `off` feature, refuse a second install before starting
//! anything, log NeMo Gym's install notice, then either install a recorder
//! that records nothing (silenced: the role is still declared) or start the
//! backend, install its recorder into the facade and, with the `metrics`
//! bridge, set the bridge as the process's `metrics` recorder.

use gym_metrics_api::backend::{CompiledOffError, NoopRecorder, Recorder, ALREADY_INSTALLED};
use gym_metrics_api::{Installation, Role};

use crate::env::GymEnv;

/// Why an install stopped before anything was installed.
///
/// ```
/// let e = gym_metrics_kit::install::InstallError::AlreadyInstalled;
/// assert!(e.to_string().contains("once"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The program was built with the API's `off` feature.
    #[error(transparent)]
    CompiledOff(#[from] CompiledOffError),
    /// A gym-metrics recorder is already installed in this process.
    #[error("{}", ALREADY_INSTALLED)]
    AlreadyInstalled,
}

/// How a backend's error says the sequence's refusals (`From` the API's
/// `off` feature's error, and a constant for a second install).
///
/// ```
/// use gym_metrics_kit::install::{InstallError, InstallFailure};
/// assert!(matches!(InstallError::ALREADY_INSTALLED, InstallError::AlreadyInstalled));
/// ```
pub trait InstallFailure: From<CompiledOffError> {
    /// A gym-metrics recorder is already installed in this process.
    const ALREADY_INSTALLED: Self;
}

impl InstallFailure for InstallError {
    const ALREADY_INSTALLED: Self = InstallError::AlreadyInstalled;
}

/// What an install does once the gym-metrics recorder is in: nothing (`()`,
/// `None`), or set the `metrics` bridge as the process's `metrics` recorder
/// (`gym_metrics_kit::bridge::MetricsBridgeRecorder`, feature `metrics-bridge`).
///
/// ```
/// use gym_metrics_kit::install::{InstallError, ThenInstall};
/// assert!(ThenInstall::<InstallError>::then_install(None::<()>).is_ok());
/// ```
pub trait ThenInstall<E> {
    /// Does it.
    ///
    /// # Errors
    /// The step's own (another `metrics` recorder is set already).
    fn then_install(self) -> Result<(), E>;
}

impl<E> ThenInstall<E> for () {
    fn then_install(self) -> Result<(), E> {
        Ok(())
    }
}

impl<E, T: ThenInstall<E>> ThenInstall<E> for Option<T> {
    fn then_install(self) -> Result<(), E> {
        self.map_or(Ok(()), ThenInstall::then_install)
    }
}

/// One backend's install, decided when it is made: silenced or not, and the
/// recorder a silenced install declares its role with.
///
/// ```
/// use gym_metrics_api::backend::NoopRecorder;
/// use gym_metrics_api::Role;
/// use gym_metrics_kit::env::GymEnv;
/// use gym_metrics_kit::install::{Install, InstallError};
/// let install = Install::new("my-backend", &GymEnv::default(), Role::orchestrator());
/// let (started, installation) = install.run(
///     "builder",
///     |builder| Ok::<_, InstallError>((NoopRecorder::new(Role::orchestrator()), builder.len(), ())),
///     |_| unreachable!("not silenced"),
/// )?;
/// assert_eq!(started, 7);
/// assert!(installation.fleet_size().is_some());
/// // Once per process.
/// let again = Install::new("my-backend", &GymEnv::default(), Role::orchestrator());
/// let e = again.run((), |()| Ok((NoopRecorder::new(Role::orchestrator()), (), ())), |()| Ok(()));
/// assert!(matches!(e, Err(InstallError::AlreadyInstalled)));
/// # Ok::<(), InstallError>(())
/// ```
#[derive(Debug)]
pub struct Install {
    backend: &'static str,
    gym: GymEnv,
    silenced: bool,
    role: Role,
}

impl Install {
    /// The install of `backend` (its crate name, for the notice line) under
    /// NeMo Gym's settings `gym`, declaring `role`.
    ///
    /// ```
    /// use gym_metrics_kit::install::Install;
    /// let i = Install::new("b", &Default::default(), gym_metrics_api::Role::orchestrator());
    /// assert!(!i.is_silenced());
    /// ```
    pub fn new(backend: &'static str, gym: &GymEnv, role: Role) -> Self {
        Self {
            backend,
            silenced: gym.silenced_by().is_some(),
            gym: gym.clone(),
            role,
        }
    }

    /// Also silenced when `silenced` (a reason of the backend's own, such as
    /// the OpenTelemetry exporter `none`).
    ///
    /// ```
    /// use gym_metrics_kit::install::Install;
    /// let i = Install::new("b", &Default::default(), gym_metrics_api::Role::orchestrator());
    /// assert!(i.silenced_also(true).is_silenced());
    /// ```
    pub fn silenced_also(mut self, silenced: bool) -> Self {
        self.silenced |= silenced;
        self
    }

    /// Whether this install records nothing.
    ///
    /// ```
    /// use gym_metrics_kit::install::Install;
    /// let i = Install::new("b", &Default::default(), gym_metrics_api::Role::orchestrator());
    /// assert!(!i.is_silenced());
    /// ```
    pub fn is_silenced(&self) -> bool {
        self.silenced
    }

    /// The sequence: `start(builder)` gives the recorder to install, what
    /// the backend hands back and the step after the install ([`ThenInstall`]);
    /// when silenced, `silenced(builder)` gives what it hands back instead,
    /// and a recorder that records nothing is installed.
    ///
    /// # Errors
    /// The API's `off` feature or a recorder already installed (both
    /// checked before anything starts: [`InstallFailure`]), or `start`'s,
    /// `silenced`'s or the step's error. (Example at [`Install`].)
    pub fn run<B, R, T, M, E>(
        self,
        builder: B,
        start: impl FnOnce(B) -> Result<(R, T, M), E>,
        silenced: impl FnOnce(B) -> Result<T, E>,
    ) -> Result<(T, Installation), E>
    where
        R: Recorder,
        M: ThenInstall<E>,
        E: InstallFailure,
    {
        gym_metrics_api::backend::check_recording_compiled_in()?;
        if gym_metrics_api::role().is_some() {
            return Err(E::ALREADY_INSTALLED);
        }
        self.gym.log_install_notice(self.backend);
        if self.silenced {
            let handed = silenced(builder)?;
            let noop = NoopRecorder::new(self.role).with_span_groups(self.gym.span_groups());
            let installation = gym_metrics_api::install(noop).map_err(|_| E::ALREADY_INSTALLED)?;
            return Ok((handed, installation));
        }
        let (recorder, handed, then) = start(builder)?;
        let installation = gym_metrics_api::install(recorder).map_err(|_| E::ALREADY_INSTALLED)?;
        then.then_install()?;
        Ok((handed, installation))
    }
}
