//! End to end, issue 18 §2's OTLP variant at a small size: one gym-fleet on
//! the otel backend pushing OTLP/gRPC through a real rotel collector into
//! VictoriaMetrics (started with the kit's `deploy/victoriametrics/otlp-relabel.yml`,
//! which gives every series its process's `instance` and the fleet's `job`),
//! checked as the scraped variant is (`fleet_scale_e2e.rs`):
//!
//! - every process present exactly once (one series of a gym counter per
//!   `instance`, as many instances as processes);
//! - exactly one fleet-size series, equal to the live servers, also after
//!   SIGKILL of some servers (the time it took is printed);
//! - after an orderly stop nothing is counted twice or lost: the agents'
//!   rollouts stored equal the agents' own totals exactly (each process's
//!   final export carries its full cumulative totals).
//!
//! The size defaults to 10 resources servers and 3 agents (14 processes);
//! the full size is
//! `GYM_SCALE_SERVERS=150 GYM_SCALE_AGENTS=50 cargo test -p gym-metrics-examples --no-default-features --features otel --test fleet_scale_otlp_e2e -- --nocapture`.
#![cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{send_signal, Fleet};
use gym_testkit::{require, Rotel, Sample, Tool, VictoriaMetrics};

/// The fleet's export interval.
const INTERVAL: Duration = Duration::from_secs(1);
/// `OTEL_SERVICE_NAME`: the fleet (`job`, after the kit's relabeling).
const FLEET: &str = "scale-otlp";

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .map(|v| v.parse().unwrap_or_else(|e| panic!("{var}={v:?}: {e}")))
        .unwrap_or(default)
}

/// Bounded waits grow with the fleet (launching 200 processes takes a while).
fn bound(processes: usize) -> Duration {
    Duration::from_secs(30 + processes as u64 / 4)
}

fn one_value(samples: &[Sample], value: f64) -> bool {
    samples.len() == 1 && samples[0].value == value
}

#[test]
fn an_otlp_fleet_through_rotel_is_stored_once_per_process_and_exactly() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for tool in [Tool::VictoriaMetrics, Tool::Rotel] {
        require(tool);
    }
    let servers = size("GYM_SCALE_SERVERS", 10);
    let agents = size("GYM_SCALE_AGENTS", 3);
    assert!(servers >= 2, "GYM_SCALE_SERVERS must be 2 or more");
    let killed = (servers * 20 / 150).max(1);
    let processes = 1 + servers + agents;
    let wait = bound(processes);

    let relabel =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/victoriametrics/otlp-relabel.yml");
    let vm = VictoriaMetrics::start_with_flags(&[format!("-relabelConfig={}", relabel.display())])
        .expect("victoria-metrics starts");
    let rotel = Rotel::start(&vm).expect("rotel starts");
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", rotel.grpc_endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
        (
            "OTEL_METRIC_EXPORT_INTERVAL",
            INTERVAL.as_millis().to_string(),
        ),
        ("OTEL_SERVICE_NAME", FLEET.to_string()),
    ];
    let args = gym_testkit::scale_fleet::args(servers, agents, wait * 4);
    let started = Instant::now();
    let mut fleet = Fleet::start(&args, &env);
    fleet
        .wait_line(wait, |l| l.starts_with("processes:"))
        .unwrap_or_else(|| panic!("the fleet did not start:\n{}", fleet.output()));
    eprintln!("{processes} processes ready in {:?}", started.elapsed());
    let context = |fleet: &Fleet| {
        format!(
            "{}\n--- rotel:\n{}\n--- victoria-metrics:\n{}",
            fleet.output(),
            rotel.log_tail(),
            vm.log_tail()
        )
    };

    // Every process once: one series of the verify counter per instance
    // (every process exports it from the start), one instance per process.
    let per_instance = vm
        .wait_for(
            &format!("count by (instance) (gym_verify_completed_total{{job=\"{FLEET}\"}})"),
            wait,
            |s| s.len() == processes,
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", context(&fleet)));
    let twice: Vec<&Sample> = per_instance.iter().filter(|s| s.value != 1.0).collect();
    assert!(twice.is_empty(), "stored more than once: {twice:?}");
    vm.wait_for("gym_servers_active", wait, |s| one_value(s, servers as f64))
        .unwrap_or_else(|e| {
            panic!(
                "exactly one fleet-size series of {servers}: {e}\n{}",
                context(&fleet)
            )
        });
    eprintln!("{processes} processes stored once each, fleet size {servers}");

    // SIGKILL `killed` servers: the fleet size follows.
    let pids: Vec<u32> = (0..killed)
        .map(|i| fleet.pid_of(&format!("resources-{i}")))
        .collect();
    let killed_at = Instant::now();
    for pid in pids {
        send_signal(pid, "KILL");
    }
    let live = servers - killed;
    vm.wait_for("gym_servers_active", wait, |s| one_value(s, live as f64))
        .unwrap_or_else(|e| panic!("{e}\n{}", context(&fleet)));
    let followed = killed_at.elapsed();
    eprintln!("fleet size {live} in VictoriaMetrics {followed:?} after the kill");
    // Two export intervals, and a second for the orchestrator to see the
    // deaths and rotel to forward the export.
    let within = 2 * INTERVAL + Duration::from_secs(1);
    assert!(
        followed <= within,
        "the fleet size followed the kill in {followed:?}, more than {within:?}"
    );

    // Run a while longer, then stop in order: every agent's final export
    // carries its full totals, so what is stored is what the agents counted.
    std::thread::sleep(Duration::from_secs(8).saturating_sub(killed_at.elapsed()));
    send_signal(fleet.pid(), "TERM");
    let (status, output) = fleet.wait(wait);
    assert!(status.success(), "{output}");
    let own: f64 = (0..agents)
        .map(|i| crate::support::agent_completed(&output, &format!("agent-{i}")))
        .sum();
    assert!(own > 0.0, "the agents completed no rollouts:\n{output}");
    let stored = "sum(max_over_time(gym_rollout_duration_ms_milliseconds_count{nemo_gym_server_type=\"responses_api_agents\"}[10m]))";
    let samples = vm
        .wait_for(stored, Duration::from_secs(10), |s| one_value(s, own))
        .unwrap_or_else(|e| panic!("the agents counted {own} rollouts: {e}\n{output}"));
    eprintln!(
        "agents' rollouts stored {}, agents' own count {own}",
        samples[0].value
    );
}
