//! A recorder that counts what reaches it, shared by the scenario binaries.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{FleetTarget, Role};

/// Verifications counted as they arrive (the backends' sharded tally is
/// the kit's, and is tested there).
#[derive(Default)]
pub struct Tally {
    completed: AtomicU64,
    succeeded: AtomicU64,
}

/// What [`Tally`] has counted.
pub struct Counts {
    pub completed: u64,
    pub succeeded: u64,
}

impl Tally {
    pub fn record(&self, succeeded: bool) {
        self.completed.fetch_add(1, Ordering::Relaxed);
        self.succeeded
            .fetch_add(u64::from(succeeded), Ordering::Relaxed);
    }
    pub fn snapshot(&self) -> Counts {
        Counts {
            completed: self.completed.load(Ordering::Relaxed),
            succeeded: self.succeeded.load(Ordering::Relaxed),
        }
    }
}

pub struct CountingRecorder {
    pub role: Role,
    pub rollouts: AtomicU64,
    pub rollout_ms: Mutex<Vec<f64>>,
    pub verify_ms: Mutex<Vec<f64>>,
    pub tally: Tally,
    pub active_servers: Mutex<Vec<u64>>,
    pub published_targets: Mutex<Vec<Vec<FleetTarget>>>,
}

impl CountingRecorder {
    pub fn new(role: Role) -> Self {
        Self {
            role,
            rollouts: AtomicU64::new(0),
            rollout_ms: Mutex::new(Vec::new()),
            verify_ms: Mutex::new(Vec::new()),
            tally: Tally::default(),
            active_servers: Mutex::new(Vec::new()),
            published_targets: Mutex::new(Vec::new()),
        }
    }

    /// Leaks a recorder and returns a `'static` view plus a forwarding recorder
    /// to install, so a test can inspect what was recorded after install.
    pub fn leaked(role: Role) -> (&'static CountingRecorder, Forward) {
        let r: &'static CountingRecorder = Box::leak(Box::new(CountingRecorder::new(role)));
        (r, Forward(r))
    }
}

impl Recorder for CountingRecorder {
    fn role(&self) -> &Role {
        &self.role
    }
    fn record_rollout_duration_ms(&self, ms: f64) {
        self.rollouts.fetch_add(1, Ordering::Relaxed);
        self.rollout_ms.lock().unwrap().push(ms);
    }
    fn record_verify_ms(&self, ms: f64, succeeded: bool) {
        self.tally.record(succeeded);
        if self.verify_ms.lock().unwrap().len() < 1_000 {
            self.verify_ms.lock().unwrap().push(ms);
        }
    }
    fn record_active_servers(&self, count: u64) {
        self.active_servers.lock().unwrap().push(count);
    }
    fn publish_fleet_targets(&self, targets: &[FleetTarget]) {
        self.published_targets
            .lock()
            .unwrap()
            .push(targets.to_vec());
    }
}

/// Installs as a recorder while the test keeps a `'static` reference to the counts.
pub struct Forward(pub &'static CountingRecorder);

impl Recorder for Forward {
    fn role(&self) -> &Role {
        self.0.role()
    }
    fn record_rollout_duration_ms(&self, ms: f64) {
        self.0.record_rollout_duration_ms(ms)
    }
    fn record_verify_ms(&self, ms: f64, succeeded: bool) {
        self.0.record_verify_ms(ms, succeeded)
    }
    fn record_active_servers(&self, count: u64) {
        self.0.record_active_servers(count)
    }
    fn publish_fleet_targets(&self, targets: &[FleetTarget]) {
        self.0.publish_fleet_targets(targets)
    }
}
