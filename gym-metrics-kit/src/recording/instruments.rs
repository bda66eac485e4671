//! Everything one process records: the state shared by the recorder (writer)
//! and the exposition (reader).

use gym_metrics_api::backend::Boundaries;
use gym_metrics_api::Role;

use std::sync::Arc;
use std::time::Duration;

use crate::memory::MemoryProfiler;

use super::fleet_gauge::FleetGauge;
use super::fleet_sd::{FleetSd, SharedFleetSd};
use super::http_histogram::HttpServerHistogram;
use super::native::{Layout, NativeConfig};
use super::sharded_histogram::ShardedHistogram;

/// The recorded values of the contract's instruments, cumulative since
/// build: what a backend's recorder writes and its exposition or export
/// reads (example at [the module](super)).
#[derive(Debug)]
pub struct GymMetrics {
    /// The role this process declared.
    pub role: Role,
    /// `gym.rollout.duration_ms`.
    pub rollout_duration: ShardedHistogram,
    /// Also the verify tally: its count is `completed`, its successes `succeeded`.
    pub verify_duration: ShardedHistogram,
    /// `gym.servers.active`: present only when the role writes the fleet size
    /// (decided here, at build), so nothing downstream checks the role.
    pub servers_active: Option<FleetGauge>,
    /// The fleet's published scrape targets (`GET /sd`): present by the same
    /// rule as `servers_active`, so a server's endpoint has no `/sd`.
    pub fleet_sd: SharedFleetSd,
    /// `http.server.request.duration`, one series per attribute tuple.
    pub http_server_request_duration: HttpServerHistogram,
    /// NeMo Gym's memory gauges of the launched servers: only for an
    /// orchestrator with Gym's memory profiling on.
    pub memory: Option<Arc<MemoryProfiler>>,
}

impl GymMetrics {
    /// Nothing recorded yet, for `role`: the duration histograms on
    /// `boundaries`, every histogram with native buckets as `native` says;
    /// the fleet gauge and fleet only for a role that writes the fleet size.
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_api::Role;
    /// use gym_metrics_kit::recording::{GymMetrics, NativeConfig};
    /// let server = GymMetrics::new(Role::default_server(), Boundaries::default(), NativeConfig::default());
    /// assert!(server.servers_active.is_none() && server.fleet_sd.is_none());
    /// let orchestrator = GymMetrics::new(Role::orchestrator(), Boundaries::default(), NativeConfig::default());
    /// assert!(orchestrator.servers_active.is_some());
    /// ```
    pub fn new(role: Role, boundaries: Boundaries, native: NativeConfig) -> Self {
        Self {
            rollout_duration: ShardedHistogram::new(boundaries.clone(), Layout::durations(native)),
            verify_duration: ShardedHistogram::new(boundaries, Layout::durations(native)),
            servers_active: role.writes_fleet_size().then(FleetGauge::new),
            fleet_sd: role.writes_fleet_size().then(|| Arc::new(FleetSd::new())),
            http_server_request_duration: HttpServerHistogram::new(native),
            memory: None,
            role,
        }
    }

    /// These metrics with Gym's memory profiling every `interval`, if any
    /// (`GymEnv::memory_profiling` decides for the role).
    ///
    /// ```
    /// use gym_metrics_api::backend::Boundaries;
    /// use gym_metrics_api::Role;
    /// use gym_metrics_kit::recording::{GymMetrics, NativeConfig};
    /// let m = GymMetrics::new(Role::orchestrator(), Boundaries::default(), NativeConfig::default());
    /// assert!(m.with_memory_profiling(None).memory.is_none());
    /// ```
    pub fn with_memory_profiling(mut self, interval: Option<Duration>) -> Self {
        self.memory = interval.map(|i| Arc::new(MemoryProfiler::start(i)));
        self
    }
}
