//! e2e against real servers, for the scenarios that install nothing
//! process-wide (each builds its own recorders): one test binary, named
//! `*e2e*` so that `cargo xtask e2e` runs it.

#[path = "../support/mod.rs"]
mod support;

use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

/// Builds an orchestrator's and a server's recorder from `builder`, records
/// the reference sequence through each, and shuts both down: their final
/// exports carry everything.
fn record_as_orchestrator_and_server(builder: impl Fn(Role) -> OtelBuilder) {
    let start = |role: Role| builder(role).build().unwrap();
    let (orchestrator, orchestrator_guard) = start(Role::orchestrator());
    let (server, server_guard) = start(Role::server("math-0", "resources"));
    support::record_reference_sequence(&orchestrator);
    support::record_reference_sequence(&server);
    orchestrator_guard.shutdown().unwrap();
    server_guard.shutdown().unwrap();
}

mod metrics_bridge_victoria;
mod rotel_grpc;
mod rotel_grpc_restart;
mod victoria_http;
