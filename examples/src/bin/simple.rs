//! The simplest gym-metrics program: install the backend chosen at build time,
//! record one of everything, print where to look.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_examples::{backend, logging};

fn main() -> ExitCode {
    if let Err(e) = logging::init() {
        eprintln!("simple: {e}");
        return ExitCode::from(2);
    }
    let guard = match backend::install(
        Role::orchestrator(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    ) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("simple: cannot install the {} backend: {e}", backend::NAME);
            return ExitCode::FAILURE;
        }
    };
    gym_metrics_api::record_rollout_duration(Duration::from_millis(1200));
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    if let Some(fleet) = guard.fleet_size() {
        fleet.set(1);
    }
    println!(
        "recorded one rollout, one verification and a fleet size of 1 ({} backend)",
        backend::NAME
    );
    if let Some(text) = guard.reader().render() {
        if let Some(addr) = guard.metrics_addr() {
            println!("served on http://{addr}/metrics:\n");
        }
        print!("{text}");
    }
    match guard.shutdown() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simple: flushing the metrics failed: {e}");
            ExitCode::FAILURE
        }
    }
}
