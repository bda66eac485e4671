//! The [`Recorder`] the facade forwards every record call to.

use std::sync::Arc;
use std::time::Duration;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{HttpServerRequest, Role};

use crate::gym_metrics::GymMetrics;

/// The Prometheus backend's recorder: per-thread shards, summed at scrape time.
///
/// Obtained from [`crate::PrometheusBuilder::build`] (or installed by
/// [`crate::PrometheusBuilder::install`]).
///
/// ```
/// use gym_metrics_api::backend::Recorder;
/// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// recorder.record_rollout_duration_ms(120.0);
/// assert!(handle.render().contains("gym_rollout_duration_ms_milliseconds_count{"));
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PrometheusRecorder {
    metrics: Arc<GymMetrics>,
}

impl PrometheusRecorder {
    pub(crate) fn new(metrics: Arc<GymMetrics>) -> Self {
        Self { metrics }
    }
}

impl Recorder for PrometheusRecorder {
    fn role(&self) -> &Role {
        &self.metrics.role
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

    #[inline]
    fn record_active_servers(&self, count: u64) {
        // The facade forwards this for an orchestrator only; ignore it otherwise too.
        if self.metrics.role.is_orchestrator() {
            self.metrics.servers_active.set(count);
        }
    }

    #[inline]
    fn record_http_server_request(&self, request: &HttpServerRequest) {
        self.metrics.http_server_duration.record(request);
    }
}
