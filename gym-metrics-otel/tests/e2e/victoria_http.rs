//! OTLP http/protobuf straight into VictoriaMetrics, read back with PromQL.

use crate::support;

use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use gym_testkit::{require, Tool, VictoriaMetrics};
use support::victoria::{assert_reference_sequence, dump};
use support::*;

#[test]
fn reference_sequence_lands_in_victoria_metrics() {
    if require(Tool::VictoriaMetrics).is_none() {
        return;
    }
    let vm = VictoriaMetrics::start().unwrap();
    let start = |role: Role| {
        OtelBuilder::new()
            .role(role)
            .service_name("e2e-http")
            .endpoint(vm.otlp_http_metrics_endpoint())
            .export_interval(Duration::from_millis(300))
            .build()
            .unwrap()
    };
    let (orchestrator, orchestrator_guard) = start(Role::orchestrator());
    let (server, server_guard) = start(Role::server("math-0", "resources"));
    record_reference_sequence(&orchestrator);
    record_reference_sequence(&server);
    orchestrator_guard.shutdown().unwrap();
    server_guard.shutdown().unwrap();

    eprintln!("series in VictoriaMetrics:\n{}", dump(&vm));
    assert_reference_sequence(&vm, "e2e-http/orchestrator", true);
    assert_reference_sequence(&vm, "e2e-http/math-0", false);
    let fleet = vm.query("gym_servers_active").unwrap();
    assert_eq!(
        fleet.len(),
        1,
        "only the orchestrator writes the fleet size: {fleet:?}"
    );
}
