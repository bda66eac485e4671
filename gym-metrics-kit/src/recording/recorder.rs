//! The [`Recorder`] both backends install: every record call lands in the
//! one recording core ([`GymMetrics`]), so the record path is the same code
//! whichever wire the values leave by.

use std::sync::Arc;
use std::time::Duration;

use gym_metrics_api::backend::{Exemplar, Recorder, SpanGroups};
use gym_metrics_api::{FleetTarget, HttpServerRequest, Role};

use super::GymMetrics;
use crate::env::ExemplarFilter;

/// The recorder of the gym instruments: a handle on the process's
/// [`GymMetrics`], summed at each scrape or export. Cheap to clone.
///
/// ```
/// use std::sync::Arc;
/// use gym_metrics_api::backend::{Boundaries, Recorder, SpanGroups};
/// use gym_metrics_api::Role;
/// use gym_metrics_kit::recording::{GymMetrics, GymRecorder, NativeConfig};
/// let metrics = Arc::new(GymMetrics::new(Role::default_server(), Boundaries::default(), NativeConfig::default()));
/// let recorder = GymRecorder::new(Arc::clone(&metrics), SpanGroups::ALL);
/// recorder.record_verify_ms(40.0, true);
/// assert_eq!(metrics.verify_duration.snapshot().successes, 1);
/// ```
#[derive(Debug, Clone)]
pub struct GymRecorder {
    metrics: Arc<GymMetrics>,
    span_groups: SpanGroups,
    exemplars: ExemplarFilter,
}

impl GymRecorder {
    /// A recorder into `metrics`, gated by `span_groups`, taking exemplars
    /// by the default filter (when the `exemplars` feature reads spans).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use gym_metrics_api::backend::{Boundaries, Recorder, SpanGroups};
    /// use gym_metrics_api::Role;
    /// use gym_metrics_kit::recording::{GymMetrics, GymRecorder, NativeConfig};
    /// let metrics = GymMetrics::new(Role::orchestrator(), Boundaries::default(), NativeConfig::default());
    /// let recorder = GymRecorder::new(Arc::new(metrics), SpanGroups::ALL);
    /// assert!(recorder.role().is_orchestrator());
    /// ```
    pub fn new(metrics: Arc<GymMetrics>, span_groups: SpanGroups) -> Self {
        Self {
            metrics,
            span_groups,
            exemplars: ExemplarFilter::default(),
        }
    }

    /// This recorder taking exemplars by `filter`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use gym_metrics_api::backend::{Boundaries, Recorder, SpanGroups};
    /// use gym_metrics_api::Role;
    /// use gym_metrics_kit::env::ExemplarFilter;
    /// use gym_metrics_kit::recording::{GymMetrics, GymRecorder, NativeConfig};
    /// let metrics = GymMetrics::new(Role::default_server(), Boundaries::default(), NativeConfig::default());
    /// let recorder = GymRecorder::new(Arc::new(metrics), SpanGroups::ALL).with_exemplar_filter(ExemplarFilter::AlwaysOff);
    /// assert_eq!(recorder.exemplar(), None);
    /// ```
    pub fn with_exemplar_filter(mut self, filter: ExemplarFilter) -> Self {
        self.exemplars = filter;
        self
    }

    /// What this recorder records into.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use gym_metrics_api::backend::{Boundaries, SpanGroups};
    /// use gym_metrics_api::Role;
    /// use gym_metrics_kit::recording::{GymMetrics, GymRecorder, NativeConfig};
    /// let metrics = Arc::new(GymMetrics::new(Role::default_server(), Boundaries::default(), NativeConfig::default()));
    /// let recorder = GymRecorder::new(Arc::clone(&metrics), SpanGroups::ALL);
    /// assert!(Arc::ptr_eq(recorder.metrics(), &metrics));
    /// ```
    pub fn metrics(&self) -> &Arc<GymMetrics> {
        &self.metrics
    }
}

impl Recorder for GymRecorder {
    fn role(&self) -> &Role {
        &self.metrics.role
    }

    fn span_groups(&self) -> SpanGroups {
        self.span_groups
    }

    #[inline]
    fn record_rollout_duration_ms(&self, duration_ms: f64) {
        self.metrics.rollout_duration.record(duration_ms);
    }

    #[inline]
    fn record_verify_ms(&self, duration_ms: f64, succeeded: bool) {
        self.metrics
            .verify_duration
            .record_outcome(duration_ms, succeeded);
    }

    #[inline]
    fn record_rollout_duration(&self, elapsed: Duration) {
        self.metrics.rollout_duration.record_duration(elapsed);
    }

    #[inline]
    fn record_verify(&self, elapsed: Duration, succeeded: bool) {
        self.metrics
            .verify_duration
            .record_duration_outcome(elapsed, succeeded);
    }

    #[cfg(feature = "exemplars")]
    fn exemplar(&self) -> Option<Exemplar> {
        match self.exemplars {
            ExemplarFilter::AlwaysOff => None,
            filter => super::exemplar_context::current(filter == ExemplarFilter::TraceBased),
        }
    }

    fn record_rollout_duration_with(&self, elapsed: Duration, exemplar: Option<&Exemplar>) {
        (self.metrics.rollout_duration).record_duration_with(elapsed, None, exemplar);
    }

    fn record_verify_with(&self, elapsed: Duration, succeeded: bool, exemplar: Option<&Exemplar>) {
        (self.metrics.verify_duration).record_duration_with(elapsed, Some(succeeded), exemplar);
    }

    #[inline]
    fn record_active_servers(&self, count: u64) {
        // Only a role that writes the fleet size was built with the gauge.
        if let Some(gauge) = &self.metrics.servers_active {
            gauge.set(count);
        }
    }

    #[inline]
    fn record_http_server_request(&self, request: &HttpServerRequest) {
        self.metrics.http_server_request_duration.record(request);
    }

    fn publish_fleet_targets(&self, targets: &[FleetTarget]) {
        // Only a role that writes the fleet size was built with a list.
        if let Some(sd) = &self.metrics.fleet_sd {
            sd.publish(targets);
        }
    }

    fn publish_processes(&self, servers: &[(Role, u32)]) {
        // Only an orchestrator with Gym's memory profiling on has a profiler.
        if let Some(memory) = &self.metrics.memory {
            memory.set_servers(servers);
        }
    }
}

#[cfg(test)]
mod tests {
    use gym_metrics_api::backend::{Boundaries, Recorder, SpanGroups};
    use gym_metrics_api::{FleetTarget, Role};

    use super::*;
    use crate::recording::NativeConfig;

    fn recorder(role: Role) -> GymRecorder {
        let metrics = GymMetrics::new(role, Boundaries::default(), NativeConfig::default());
        GymRecorder::new(Arc::new(metrics), SpanGroups::ALL)
    }

    #[test]
    fn only_a_role_that_writes_the_fleet_size_keeps_the_gauge_and_the_fleet() {
        let target = FleetTarget::new("127.0.0.1:9101").unwrap();
        let orchestrator = recorder(Role::orchestrator());
        orchestrator.record_active_servers(4);
        orchestrator.publish_fleet_targets(std::slice::from_ref(&target));
        let m = orchestrator.metrics();
        assert_eq!(m.servers_active.as_ref().and_then(|g| g.get()), Some(4));
        let sd = m.fleet_sd.as_ref().unwrap().document();
        assert!(String::from_utf8_lossy(&sd).contains("\"127.0.0.1:9101\""));
        // Straight to a server's recorder, past the capability: nothing kept.
        let server = recorder(Role::server("s-0", "agent"));
        server.record_active_servers(4);
        server.publish_fleet_targets(&[target]);
        assert!(server.metrics().servers_active.is_none());
        assert!(server.metrics().fleet_sd.is_none());
    }
}
