//! Everything one process records: the state shared by the recorder (writer)
//! and the exposition (reader).

use gym_metrics_api::backend::Boundaries;
use gym_metrics_api::Role;

use std::sync::Arc;
use std::time::Duration;

use gym_metrics_kit::memory::MemoryProfiler;

use super::fleet_gauge::FleetGauge;
use super::fleet_sd::{FleetSd, SharedFleetSd};
use super::http_histogram::HttpServerHistogram;
use super::native::{Layout, NativeConfig};
use super::sharded_histogram::ShardedHistogram;

/// The recorded values of the contract's instruments, cumulative since build.
#[derive(Debug)]
pub(crate) struct GymMetrics {
    pub(crate) role: Role,
    pub(crate) rollout_duration: ShardedHistogram,
    /// Also the verify tally: its count is `completed`, its successes `succeeded`.
    pub(crate) verify_duration: ShardedHistogram,
    /// `gym.servers.active`: present only when the role writes the fleet size
    /// (decided here, at build), so nothing downstream checks the role.
    pub(crate) servers_active: Option<FleetGauge>,
    /// The fleet's published scrape targets (`GET /sd`): present by the same
    /// rule as `servers_active`, so a server's endpoint has no `/sd`.
    pub(crate) fleet_sd: SharedFleetSd,
    /// `http.server.request.duration`, one series per attribute tuple.
    pub(crate) http_server_duration: HttpServerHistogram,
    /// NeMo Gym's memory gauges of the launched servers: only for an
    /// orchestrator with Gym's memory profiling on.
    pub(crate) memory: Option<Arc<MemoryProfiler>>,
}

impl GymMetrics {
    pub(crate) fn new(role: Role, boundaries: Boundaries, native: NativeConfig) -> Self {
        Self {
            rollout_duration: ShardedHistogram::new(boundaries.clone(), Layout::durations(native)),
            verify_duration: ShardedHistogram::new(boundaries, Layout::durations(native)),
            servers_active: role.writes_fleet_size().then(FleetGauge::new),
            fleet_sd: role.writes_fleet_size().then(|| Arc::new(FleetSd::new())),
            http_server_duration: HttpServerHistogram::new(native),
            memory: None,
            role,
        }
    }

    /// These metrics with Gym's memory profiling every `interval`, if any
    /// (`GymEnv::memory_profiling` decides for the role).
    pub(crate) fn with_memory_profiling(mut self, interval: Option<Duration>) -> Self {
        self.memory = interval.map(|i| Arc::new(MemoryProfiler::start(i)));
        self
    }
}
