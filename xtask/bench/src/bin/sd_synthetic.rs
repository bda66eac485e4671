//! The orchestrator's `GET /sd` at a size no test machine can launch: the
//! Prometheus backend installed as the orchestrator on loopback, publishing
//! `N` synthetic targets shaped like the fleet's (a `host:port` and the four
//! stable labels), so `cargo xtask bench scale` can time the endpoint.
//!
//! Usage: `sd_synthetic N`. Prints `http://ADDR/sd`, then the publish time
//! (rendering the document) in microseconds, one per line, and serves until
//! standard input closes.

use std::io::Read;
use std::process::ExitCode;
use std::time::Instant;

use gym_metrics_api::{FleetTarget, Role};

fn main() -> ExitCode {
    let Some(n) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
    else {
        eprintln!("usage: sd_synthetic N");
        return ExitCode::FAILURE;
    };
    let guard = match gym_metrics_prom::PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
    {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("sd_synthetic: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(fleet) = guard.fleet_size() else {
        eprintln!("sd_synthetic: an orchestrator install has no fleet capability");
        return ExitCode::FAILURE;
    };
    let targets: Result<Vec<FleetTarget>, _> = (0..n)
        .map(|i| {
            // Hosts of a real fleet: one name per machine, a port per process.
            let address = format!("gym-node-{:04}.cluster.local:{}", i / 64, 9100 + i % 64);
            let (name, kind) = if i % 4 == 3 {
                (format!("agent-{i}"), "responses_api_agents")
            } else {
                (format!("resources-{i}"), "resources_servers")
            };
            FleetTarget::of_process(address, &Role::server(name, kind), Some("run-scale-0001"))
        })
        .collect();
    let targets = match targets {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sd_synthetic: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    fleet.publish_targets(&targets);
    let publish_us = started.elapsed().as_micros();
    println!("http://{}/sd", guard.local_addr());
    println!("{publish_us}");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    if let Err(e) = guard.shutdown() {
        eprintln!("sd_synthetic: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
