//! One gym server process measuring more than the gym instruments, through
//! the same pipeline: the `metrics` crate (as its dependencies do), the
//! backend's own native API, and process metrics, beside one verification.
//!
//! - prom: `/metrics` on a free port of 127.0.0.1 (printed as `metrics at
//!   http://…/metrics`), served until standard input closes; the native API
//!   is the application's own `prometheus::Registry`.
//! - otel: pushed as `OTEL_*` say, then the final export at shutdown; the
//!   native API is the guard's OpenTelemetry meter provider.
//!
//! What it records is what `tests/extensions_e2e.rs` expects on both paths.

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use gym_metrics_api::Role;

fn main() -> ExitCode {
    if let Err(e) = gym_metrics_examples::logging::init() {
        eprintln!("extensions: {e}");
        return ExitCode::from(2);
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("extensions: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The role: one resources server.
fn role() -> Role {
    Role::server("extensions-0", "resources_servers")
}

/// `metrics` instruments and one verification, as any gym server (and
/// the crates it links) would record them.
fn record_through_metrics() {
    metrics::describe_counter!("app.jobs.done", "Jobs finished");
    metrics::counter!("app.jobs.done", "queue" => "fast").increment(3);
    metrics::describe_histogram!(
        "app.job.duration",
        metrics::Unit::Seconds,
        "Time one job took"
    );
    metrics::histogram!("app.job.duration", "queue" => "fast").record(0.2);
    gym_metrics_api::record_verify(Duration::from_millis(40), true);
}

#[cfg(all(feature = "prom", not(feature = "noop")))]
fn run() -> Result<(), Box<dyn Error>> {
    let registry = prometheus::Registry::new();
    let native = prometheus::IntCounter::new(
        "app_native_calls_total",
        "Calls counted by the application's own registry",
    )?;
    registry.register(Box::new(native.clone()))?;
    let guard = gym_metrics_prom::PrometheusBuilder::from_env()?
        .role(role())
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_metrics_bridge(gym_metrics_prom::MetricsBridgeOptions::new())
        .with_process_metrics()
        .with_registry(registry)
        .install()?;
    native.inc_by(2);
    record_through_metrics();
    println!("metrics at http://{}/metrics", guard.local_addr());
    // Served until whoever started it closes our standard input.
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    guard.shutdown()?;
    Ok(())
}

#[cfg(all(feature = "otel", not(any(feature = "prom", feature = "noop"))))]
fn run() -> Result<(), Box<dyn Error>> {
    let guard = gym_metrics_otel::OtelBuilder::from_env()?
        .role(role())
        .with_metrics_bridge(gym_metrics_otel::MetricsBridgeOptions::new())
        .with_process_metrics()
        .install()?;
    let provider = guard
        .meter_provider()
        .ok_or("the otel backend exports nothing (OTEL_METRICS_EXPORTER=none?)")?;
    let native = opentelemetry::metrics::MeterProvider::meter(&provider, "app")
        .u64_counter("app.native.calls")
        .with_description("Calls counted through the OpenTelemetry API")
        .build();
    native.add(2, &[]);
    record_through_metrics();
    // The final export carries everything, within its deadline.
    guard.shutdown()?;
    println!("exported");
    Ok(())
}

#[cfg(feature = "noop")]
fn run() -> Result<(), Box<dyn Error>> {
    let _guard = gym_metrics_noop::NoopBuilder::from_env()?
        .role(role())
        .install()?;
    record_through_metrics();
    println!("recorded nothing: the noop backend");
    Ok(())
}
