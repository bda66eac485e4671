//! OTLP http/protobuf straight into VictoriaMetrics, read back with PromQL.
#![cfg(feature = "http-proto")]

use crate::support;

use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use gym_testkit::{require, Tool, VictoriaMetrics};
use support::record_as_orchestrator_and_server;
use support::victoria::{assert_reference_sequence, dump};

#[test]
fn reference_sequence_lands_in_victoria_metrics() {
    require(Tool::VictoriaMetrics);
    let vm = VictoriaMetrics::start().unwrap();
    record_as_orchestrator_and_server(|role: Role| {
        OtelBuilder::new()
            .role(role)
            .service_name("e2e-http")
            .endpoint(vm.otlp_http_metrics_endpoint())
            .export_interval(Duration::from_millis(300))
    });

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
