//! The simplest gym-metrics program: start the backend chosen at build time,
//! record one of everything, show where the values went.
//!
//! Every backend starts the same way: `from_env()?` (the `OTEL_*`
//! variables), `.role(..)`, `.install()?`, and a guard with `fleet_size()`
//! and `shutdown()`. The three `start` functions below are the whole
//! start-up of each; an application writes the one of its backend.

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use gym_metrics_api::{FleetSize, Role};

fn main() -> ExitCode {
    // Warnings (a refused fleet-size write, a failed export) reach standard error.
    if let Err(e) = gym_metrics_examples::logging::init() {
        eprintln!("simple: {e}");
        return ExitCode::from(2);
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simple: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let guard = start()?;
    record_one_of_everything(guard.fleet_size());
    show(&guard);
    // Flushes what is left (the otel backend's final export, within its deadline).
    guard.shutdown()?;
    Ok(())
}

fn record_one_of_everything(fleet: Option<FleetSize>) {
    gym_metrics_api::record_rollout_duration(Duration::from_millis(1200));
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
    if let Some(fleet) = fleet {
        fleet.set(1);
    }
}

/// Prometheus: serves `/metrics` (here on a free port of 127.0.0.1; without
/// `with_http_listener`, where `OTEL_EXPORTER_PROMETHEUS_HOST`/`_PORT` say).
#[cfg(all(feature = "prom", not(feature = "noop")))]
fn start() -> Result<gym_metrics_prom::PrometheusGuard, Box<dyn Error>> {
    let guard = gym_metrics_prom::PrometheusBuilder::from_env()?
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()?;
    Ok(guard)
}

#[cfg(all(feature = "prom", not(feature = "noop")))]
fn show(guard: &gym_metrics_prom::PrometheusGuard) {
    println!("recorded one rollout, one verification and a fleet size of 1 (prom backend)");
    println!("served on http://{}/metrics:\n", guard.local_addr());
    print!("{}", guard.handle().render());
}

/// OpenTelemetry: pushes OTLP where the `OTEL_*` variables say (by default
/// to http://localhost:4318/v1/metrics every 10 s, and once more at shutdown).
#[cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]
fn start() -> Result<gym_metrics_otel::OtelGuard, Box<dyn Error>> {
    let guard = gym_metrics_otel::OtelBuilder::from_env()?
        .role(Role::orchestrator())
        .install()?;
    Ok(guard)
}

#[cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]
fn show(_guard: &gym_metrics_otel::OtelGuard) {
    println!("recorded one rollout, one verification and a fleet size of 1 (otel backend)");
    println!(
        "exporting as the OTEL_* variables say; with OTEL_METRICS_EXPORTER=console the values are printed here at shutdown"
    );
}

/// No-op: declares the role and records nothing (the examples' `noop`
/// feature also compiles every record call away).
#[cfg(feature = "noop")]
fn start() -> Result<gym_metrics_noop::NoopGuard, Box<dyn Error>> {
    let guard = gym_metrics_noop::NoopBuilder::from_env()?
        .role(Role::orchestrator())
        .install()?;
    Ok(guard)
}

#[cfg(feature = "noop")]
fn show(_guard: &gym_metrics_noop::NoopGuard) {
    println!("noop backend: nothing was recorded, every record call is compiled away");
}
