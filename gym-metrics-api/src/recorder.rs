//! The trait a backend implements, and the recorder that does nothing.

use std::time::Duration;

use crate::{HttpServerRequest, Role};

/// A metrics backend: what the facade forwards every record call to.
///
/// Implementations must be cheap, must never block on export, and must never
/// panic. Values reaching them are already validated: durations are finite and
/// non-negative milliseconds. `record_active_servers` is only forwarded for an
/// orchestrator role; a backend should still ignore it for any other role.
///
/// ```
/// use gym_metrics_api::{Recorder, Role};
/// struct Print(Role);
/// impl Recorder for Print {
///     fn role(&self) -> &Role { &self.0 }
///     fn record_rollout_duration(&self, ms: f64) { println!("rollout {ms} ms") }
///     fn record_verify(&self, ms: f64, ok: bool) { println!("verify {ms} ms ok={ok}") }
///     fn record_active_servers(&self, n: u64) { println!("{n} servers") }
/// }
/// Print(Role::orchestrator()).record_rollout_duration(12.0);
/// ```
pub trait Recorder: Send + Sync + 'static {
    /// The role this process declared; fixed for the recorder's life.
    fn role(&self) -> &Role;
    /// One rollout's wall time, in milliseconds.
    fn record_rollout_duration(&self, duration_ms: f64);
    /// One verification's wall time, in milliseconds, and whether it succeeded.
    fn record_verify(&self, duration_ms: f64, succeeded: bool);
    /// The fleet size (orchestrator only).
    fn record_active_servers(&self, count: u64);
    /// One rollout's wall time as measured: what the facade's
    /// [`crate::record_rollout_duration`] and the timers call. The default
    /// converts to milliseconds for [`Recorder::record_rollout_duration`]; a
    /// backend that keeps integer time overrides it and skips the float.
    ///
    /// ```
    /// use gym_metrics_api::{NoopRecorder, Recorder, Role};
    /// NoopRecorder::new(Role::orchestrator()).record_rollout_elapsed(std::time::Duration::from_millis(120));
    /// ```
    #[inline]
    fn record_rollout_elapsed(&self, elapsed: Duration) {
        self.record_rollout_duration(crate::facade::millis(elapsed));
    }
    /// One verification's wall time as measured, and its outcome: what the
    /// facade's [`crate::record_verify`] and the timers call. The default
    /// converts to milliseconds for [`Recorder::record_verify`].
    ///
    /// ```
    /// use gym_metrics_api::{NoopRecorder, Recorder, Role};
    /// NoopRecorder::new(Role::orchestrator()).record_verify_elapsed(std::time::Duration::from_millis(40), true);
    /// ```
    #[inline]
    fn record_verify_elapsed(&self, elapsed: Duration, succeeded: bool) {
        self.record_verify(crate::facade::millis(elapsed), succeeded);
    }
    /// One finished HTTP server request, for `http.server.request.duration`
    /// (seconds). Every attribute is already a bounded label value (see
    /// [`HttpServerRequest`]). The default records nothing, so a recorder
    /// written before this instrument existed keeps compiling.
    ///
    /// ```
    /// use gym_metrics_api::{HttpMethod, HttpServerRequest, NoopRecorder, Recorder, Role, UrlScheme};
    /// let request = HttpServerRequest::new(HttpMethod::Get, None, UrlScheme::Http, Some(404), Default::default());
    /// NoopRecorder::new(Role::orchestrator()).record_http_server_request(&request);
    /// ```
    #[inline]
    fn record_http_server_request(&self, request: &HttpServerRequest) {
        let _ = request;
    }
}

/// A recorder that records nothing; what a no-op backend installs.
///
/// ```
/// use gym_metrics_api::{NoopRecorder, Recorder, Role};
/// let r = NoopRecorder::new(Role::orchestrator());
/// r.record_verify(1.0, true);
/// assert!(r.role().is_orchestrator());
/// ```
#[derive(Debug, Clone)]
pub struct NoopRecorder {
    role: Role,
}

impl NoopRecorder {
    /// A no-op recorder for `role`.
    ///
    /// ```
    /// let _ = gym_metrics_api::NoopRecorder::new(gym_metrics_api::Role::orchestrator());
    /// ```
    pub fn new(role: Role) -> Self {
        Self { role }
    }
}

impl Recorder for NoopRecorder {
    fn role(&self) -> &Role {
        &self.role
    }
    #[inline]
    fn record_rollout_duration(&self, _duration_ms: f64) {}
    #[inline]
    fn record_verify(&self, _duration_ms: f64, _succeeded: bool) {}
    #[inline]
    fn record_active_servers(&self, _count: u64) {}
}
