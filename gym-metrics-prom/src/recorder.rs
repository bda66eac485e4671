//! The [`Recorder`] the facade forwards every record call to.

use std::sync::Arc;
use std::time::Duration;

use gym_metrics_api::backend::{Exemplar, Recorder, SpanGroups};
use gym_metrics_api::{FleetTarget, HttpServerRequest, Role};

use gym_metrics_kit::recording::GymMetrics;

/// The Prometheus backend's recorder: per-thread shards, summed at scrape time.
///
/// Obtained from [`crate::PrometheusBuilder::build`] (or installed by
/// [`crate::PrometheusBuilder::install`]).
///
/// ```
/// use gym_metrics_api::backend::{Recorder, SpanGroups};
/// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// recorder.record_rollout_duration_ms(120.0);
/// assert!(handle.render().contains("gym_rollout_duration_ms_milliseconds_count{"));
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PrometheusRecorder {
    metrics: Arc<GymMetrics>,
    span_groups: SpanGroups,
}

impl PrometheusRecorder {
    pub(crate) fn new(metrics: Arc<GymMetrics>, span_groups: SpanGroups) -> Self {
        Self {
            metrics,
            span_groups,
        }
    }
}

impl Recorder for PrometheusRecorder {
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
        crate::exemplar::current()
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
    use gym_metrics_api::{backend::Recorder, Role};

    use crate::PrometheusBuilder;

    fn fleet_line_after_writing(role: Role) -> Option<String> {
        let (recorder, handle) = PrometheusBuilder::new().role(role).build().unwrap();
        // Straight to the recorder, past the facade's own check.
        recorder.record_active_servers(4);
        let text = handle.render();
        text.lines()
            .find(|l| l.starts_with("gym_servers_active{"))
            .map(str::to_string)
    }

    #[test]
    fn only_a_role_that_writes_the_fleet_size_has_a_target_list() {
        let target = gym_metrics_api::FleetTarget::new("127.0.0.1:9101").unwrap();
        let (recorder, handle) = PrometheusBuilder::new()
            .role(Role::orchestrator())
            .build()
            .unwrap();
        assert_eq!(handle.render_fleet_sd().as_deref(), Some("[]"));
        recorder.publish_fleet_targets(std::slice::from_ref(&target));
        let sd = handle.render_fleet_sd().unwrap();
        assert!(sd.contains("\"127.0.0.1:9101\""), "{sd}");

        // Straight to a server's recorder, past the capability: nothing kept.
        let (recorder, handle) = PrometheusBuilder::new()
            .role(Role::server("s-0", "resources"))
            .build()
            .unwrap();
        recorder.publish_fleet_targets(&[target]);
        assert_eq!(handle.render_fleet_sd(), None);
    }

    #[test]
    fn only_a_role_that_writes_the_fleet_size_has_a_fleet_gauge() {
        let line = fleet_line_after_writing(Role::orchestrator()).unwrap();
        assert!(line.ends_with("} 4"), "{line}");
        assert_eq!(fleet_line_after_writing(Role::server("s-0", "agent")), None);
    }
}
