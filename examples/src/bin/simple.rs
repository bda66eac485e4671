//! The simplest gym-metrics program: install the backend chosen at build time,
//! record one of everything, print where to look.

use std::time::Duration;

use gym_metrics_api::Role;

fn main() {
    let role = Role::orchestrator();
    let installation = match gym_metrics_api::install(gym_metrics_api::NoopRecorder::new(role)) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    gym_metrics_api::record_rollout_duration(Duration::from_millis(1200));
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    if let Some(fleet) = installation.fleet_size() {
        fleet.set(1);
    }
    println!("recorded one rollout, one verification and a fleet size of 1");
}
