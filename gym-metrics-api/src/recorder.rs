//! The trait a backend implements, and the recorder that does nothing.

use std::time::Duration;

use crate::catalogue::Instrument;
use crate::exemplar::Exemplar;
use crate::span_groups::SpanGroups;
use crate::units::duration_ms;
use crate::{FleetTarget, HttpServerRequest, Role};

/// A metrics backend: what the facade forwards every record call to.
///
/// Each method has the name of the facade function that calls it: the
/// [`Duration`] methods ([`Recorder::record_rollout_duration`],
/// [`Recorder::record_verify`]) take the time as measured, their `_ms` twins
/// take milliseconds.
/// A backend must implement the `_ms` methods; the `Duration` ones convert to them unless overridden.
///
/// Implementations must be cheap, must never block on export, and must never
/// panic. Values reaching them are already validated: durations are from 0 to
/// [`Instrument::MAX_DURATION`] (`u64::MAX` nanoseconds, 584 years; in
/// milliseconds [`Instrument::MAX_DURATION_MS`]), so no number of records
/// can push a sum to `+Inf`. A backend called directly with anything else
/// (NaN, a negative, `1e308`, `Duration::MAX`) drops it, as the facade does,
/// so that both wires show the same sums (the `Duration` defaults below
/// already do). `record_active_servers` is only forwarded when
/// the role [writes the fleet size](Role::writes_fleet_size); a backend reads
/// that same rule once, when it is built, to decide whether it has a fleet
/// gauge at all.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use gym_metrics_api::backend::Recorder;
/// use gym_metrics_api::Role;
/// struct Sum(Role, AtomicU64);
/// impl Recorder for Sum {
///     fn role(&self) -> &Role { &self.0 }
///     fn record_rollout_duration_ms(&self, ms: f64) { self.1.fetch_add(ms as u64, Ordering::Relaxed); }
///     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
///     fn record_active_servers(&self, _n: u64) {}
/// }
/// let sum = Sum(Role::orchestrator(), AtomicU64::new(0));
/// sum.record_rollout_duration_ms(12.0);
/// sum.record_rollout_duration(std::time::Duration::from_millis(30)); // converted to 30.0 ms
/// assert_eq!(sum.1.load(Ordering::Relaxed), 42);
/// ```
pub trait Recorder: Send + Sync + 'static {
    /// The role this process declared; fixed for the recorder's life.
    fn role(&self) -> &Role;
    /// One rollout's wall time, in milliseconds: what the facade's
    /// [`crate::record_rollout_duration_ms`] calls.
    fn record_rollout_duration_ms(&self, duration_ms: f64);
    /// One verification's wall time, in milliseconds, and whether it
    /// succeeded: what the facade's [`crate::record_verify_ms`] calls.
    fn record_verify_ms(&self, duration_ms: f64, succeeded: bool);
    /// The fleet size (orchestrator only).
    fn record_active_servers(&self, count: u64);
    /// One rollout's wall time as measured: what the facade's
    /// [`crate::record_rollout_duration`] and the timers call. The default
    /// converts to milliseconds for [`Recorder::record_rollout_duration_ms`]; a
    /// backend that keeps integer time overrides it and skips the float.
    /// A duration longer than [`Instrument::MAX_DURATION`] is dropped.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_api::Role;
    /// struct Last(Role, Mutex<f64>);
    /// impl Recorder for Last {
    ///     fn role(&self) -> &Role { &self.0 }
    ///     fn record_rollout_duration_ms(&self, ms: f64) { *self.1.lock().unwrap() = ms; }
    ///     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    ///     fn record_active_servers(&self, _n: u64) {}
    /// }
    /// let last = Last(Role::orchestrator(), Mutex::new(0.0));
    /// last.record_rollout_duration(std::time::Duration::from_micros(1_500));
    /// assert_eq!(*last.1.lock().unwrap(), 1.5);
    /// ```
    #[inline]
    fn record_rollout_duration(&self, duration: Duration) {
        if duration <= Instrument::MAX_DURATION {
            self.record_rollout_duration_ms(duration_ms(duration));
        }
    }
    /// One verification's wall time as measured, and its outcome: what the
    /// facade's [`crate::record_verify`] and the timers call. The default
    /// converts to milliseconds for [`Recorder::record_verify_ms`], and drops
    /// a duration longer than [`Instrument::MAX_DURATION`] whole.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_api::Role;
    /// struct Last(Role, Mutex<(f64, bool)>);
    /// impl Recorder for Last {
    ///     fn role(&self) -> &Role { &self.0 }
    ///     fn record_rollout_duration_ms(&self, _ms: f64) {}
    ///     fn record_verify_ms(&self, ms: f64, ok: bool) { *self.1.lock().unwrap() = (ms, ok); }
    ///     fn record_active_servers(&self, _n: u64) {}
    /// }
    /// let last = Last(Role::orchestrator(), Mutex::new((0.0, false)));
    /// last.record_verify(std::time::Duration::from_millis(40), true);
    /// assert_eq!(*last.1.lock().unwrap(), (40.0, true));
    /// ```
    #[inline]
    fn record_verify(&self, duration: Duration, succeeded: bool) {
        if duration <= Instrument::MAX_DURATION {
            self.record_verify_ms(duration_ms(duration), succeeded);
        }
    }
    /// The exemplar of the calling context, if this backend keeps
    /// exemplars and the context has one (gym-metrics-prom's `exemplars`
    /// feature: the current OpenTelemetry span, when sampled). The timers
    /// call it as they start, never a plain record call. The default: none.
    ///
    /// ```
    /// use gym_metrics_api::backend::{NoopRecorder, Recorder};
    /// assert_eq!(NoopRecorder::new(gym_metrics_api::Role::orchestrator()).exemplar(), None);
    /// ```
    #[inline]
    fn exemplar(&self) -> Option<Exemplar> {
        None
    }
    /// [`Recorder::record_rollout_duration`] with the exemplar its timer
    /// captured. The default leaves the exemplar out.
    ///
    /// ```
    /// use gym_metrics_api::backend::{NoopRecorder, Recorder};
    /// let r = NoopRecorder::new(gym_metrics_api::Role::orchestrator());
    /// r.record_rollout_duration_with(std::time::Duration::from_millis(5), None);
    /// ```
    #[inline]
    fn record_rollout_duration_with(&self, duration: Duration, exemplar: Option<&Exemplar>) {
        let _ = exemplar;
        self.record_rollout_duration(duration);
    }
    /// [`Recorder::record_verify`] with the exemplar its timer captured.
    /// The default leaves the exemplar out.
    ///
    /// ```
    /// use gym_metrics_api::backend::{NoopRecorder, Recorder};
    /// let r = NoopRecorder::new(gym_metrics_api::Role::orchestrator());
    /// r.record_verify_with(std::time::Duration::from_millis(5), true, None);
    /// ```
    #[inline]
    fn record_verify_with(&self, duration: Duration, succeeded: bool, exemplar: Option<&Exemplar>) {
        let _ = exemplar;
        self.record_verify(duration, succeeded);
    }
    /// One finished HTTP server request, for `http.server.request.duration`
    /// (seconds). Every attribute is already a bounded label value (see
    /// [`HttpServerRequest`]). The default records nothing, so a recorder
    /// written before this instrument existed keeps compiling.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_api::{HttpMethod, HttpServerRequest, Role, UrlScheme};
    /// struct Routes(Role, Mutex<Vec<(&'static str, &'static str)>>);
    /// impl Recorder for Routes {
    ///     fn role(&self) -> &Role { &self.0 }
    ///     fn record_rollout_duration_ms(&self, _ms: f64) {}
    ///     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    ///     fn record_active_servers(&self, _n: u64) {}
    ///     fn record_http_server_request(&self, r: &HttpServerRequest) {
    ///         let status = r.status_code_str().unwrap_or("none");
    ///         self.1.lock().unwrap().push((r.route().unwrap_or("unmatched"), status));
    ///     }
    /// }
    /// let routes = Routes(Role::server("s-0", "resources"), Mutex::new(Vec::new()));
    /// let request = HttpServerRequest::new(HttpMethod::Get, None, UrlScheme::Http, Some(404), Default::default());
    /// routes.record_http_server_request(&request);
    /// assert_eq!(*routes.1.lock().unwrap(), [("unmatched", "404")]);
    /// ```
    #[inline]
    fn record_http_server_request(&self, request: &HttpServerRequest) {
        let _ = request;
    }
    /// The fleet's scrape targets, the whole list each time (orchestrator
    /// only: forwarded by [`crate::FleetSize::publish_targets`], which only
    /// an install whose role [writes the fleet size](Role::writes_fleet_size)
    /// holds). A backend with an endpoint serves it as HTTP service
    /// discovery ([`crate::FleetTarget::sd_json`]); the default keeps
    /// nothing (a push backend has no endpoint to serve it from).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_api::{FleetTarget, Role};
    /// struct Sd(Role, Mutex<String>);
    /// impl Recorder for Sd {
    ///     fn role(&self) -> &Role { &self.0 }
    ///     fn record_rollout_duration_ms(&self, _ms: f64) {}
    ///     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    ///     fn record_active_servers(&self, _n: u64) {}
    ///     fn publish_fleet_targets(&self, targets: &[FleetTarget]) {
    ///         *self.1.lock().unwrap() = FleetTarget::sd_json(targets);
    ///     }
    /// }
    /// let sd = Sd(Role::orchestrator(), Mutex::new(String::new()));
    /// sd.publish_fleet_targets(&[]);
    /// assert_eq!(*sd.1.lock().unwrap(), "[]");
    /// ```
    #[inline]
    fn publish_fleet_targets(&self, targets: &[FleetTarget]) {
        let _ = targets;
    }

    /// The processes the orchestrator launched, one per server with its
    /// [`Role`] and pid, the whole list each time (orchestrator only:
    /// forwarded by [`crate::FleetSize::publish_processes`]). A backend with
    /// NeMo Gym's memory profiling on samples their process trees, as Gym's
    /// orchestrator does ([`crate::backend::Instrument::GYM_MEMORY`]); the default
    /// keeps nothing.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_api::Role;
    /// struct Pids(Role, Mutex<Vec<u32>>);
    /// impl Recorder for Pids {
    ///     fn role(&self) -> &Role { &self.0 }
    ///     fn record_rollout_duration_ms(&self, _ms: f64) {}
    ///     fn record_verify_ms(&self, _ms: f64, _ok: bool) {}
    ///     fn record_active_servers(&self, _n: u64) {}
    ///     fn publish_processes(&self, servers: &[(Role, u32)]) {
    ///         *self.1.lock().unwrap() = servers.iter().map(|(_, pid)| *pid).collect();
    ///     }
    /// }
    /// let r = Pids(Role::orchestrator(), Mutex::new(Vec::new()));
    /// r.publish_processes(&[(Role::server("math-0", "resources_servers"), 4242)]);
    /// assert_eq!(*r.1.lock().unwrap(), [4242]);
    /// ```
    #[inline]
    fn publish_processes(&self, servers: &[(Role, u32)]) {
        let _ = servers;
    }

    /// The span groups whose call sites record (NeMo Gym's `…_SPAN_GROUPS`):
    /// read once, at install, into the facade's gate
    /// ([`crate::group_enabled`]). The default is every group.
    ///
    /// ```
    /// use gym_metrics_api::backend::{NoopRecorder, Recorder, SpanGroups};
    /// let r = NoopRecorder::new(gym_metrics_api::Role::orchestrator());
    /// assert_eq!(r.span_groups(), SpanGroups::ALL);
    /// ```
    fn span_groups(&self) -> SpanGroups {
        SpanGroups::ALL
    }
}

/// A recorder that records nothing; what a no-op backend installs.
///
/// ```
/// use gym_metrics_api::backend::{NoopRecorder, Recorder};
/// use gym_metrics_api::Role;
/// let r = NoopRecorder::new(Role::orchestrator());
/// r.record_verify_ms(1.0, true);
/// assert!(r.role().is_orchestrator());
/// ```
#[derive(Debug, Clone)]
pub struct NoopRecorder {
    role: Role,
    span_groups: SpanGroups,
}

impl NoopRecorder {
    /// A no-op recorder for `role`.
    ///
    /// ```
    /// use gym_metrics_api::backend::{NoopRecorder, Recorder};
    /// let r = NoopRecorder::new(gym_metrics_api::Role::server("agent-0", "agent"));
    /// assert_eq!(r.role().server_type(), "agent");
    /// ```
    pub fn new(role: Role) -> Self {
        Self {
            role,
            span_groups: SpanGroups::ALL,
        }
    }

    /// The same recorder, declaring `groups` as its span groups (so that
    /// [`crate::group_enabled`] answers as the configuration says even
    /// when nothing is exported).
    ///
    /// ```
    /// use gym_metrics_api::backend::{NoopRecorder, Recorder, SpanGroups};
    /// let r = NoopRecorder::new(gym_metrics_api::Role::orchestrator())
    ///     .with_span_groups(SpanGroups::DEFAULT_PRESET);
    /// assert!(!r.span_groups().contains(gym_metrics_api::Group::Verify));
    /// ```
    pub fn with_span_groups(mut self, groups: SpanGroups) -> Self {
        self.span_groups = groups;
        self
    }
}

impl Recorder for NoopRecorder {
    fn role(&self) -> &Role {
        &self.role
    }
    #[inline]
    fn record_rollout_duration_ms(&self, _duration_ms: f64) {}
    #[inline]
    fn record_verify_ms(&self, _duration_ms: f64, _succeeded: bool) {}
    #[inline]
    fn record_active_servers(&self, _count: u64) {}
    fn span_groups(&self) -> SpanGroups {
        self.span_groups
    }
}
