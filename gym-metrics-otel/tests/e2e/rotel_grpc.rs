//! OTLP/gRPC into rotel, which forwards to VictoriaMetrics; read back with PromQL.

use crate::support;

use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
use gym_testkit::{require, Rotel, Tool, VictoriaMetrics};
use support::victoria::{assert_reference_sequence, dump};
use support::*;

#[test]
fn reference_sequence_over_grpc_through_rotel() {
    if require(Tool::VictoriaMetrics).is_none() || require(Tool::Rotel).is_none() {
        return;
    }
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    let start = |role: Role| {
        OtelBuilder::new()
            .role(role)
            .service_name("e2e-grpc")
            .protocol(OtlpProtocol::Grpc)
            .endpoint(rotel.grpc_endpoint())
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

    let check = std::panic::catch_unwind(|| {
        assert_reference_sequence(&vm, "e2e-grpc/orchestrator", true);
        assert_reference_sequence(&vm, "e2e-grpc/math-0", false);
    });
    eprintln!("series in VictoriaMetrics:\n{}", dump(&vm));
    if let Err(e) = check {
        eprintln!("rotel log:\n{}", rotel.log_tail());
        std::panic::resume_unwind(e);
    }
}
