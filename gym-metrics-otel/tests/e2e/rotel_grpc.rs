//! OTLP/gRPC into rotel, which forwards to VictoriaMetrics; read back with PromQL.

use crate::support;

use std::time::Duration;

use crate::record_as_orchestrator_and_server;
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
use gym_testkit::{require, Rotel, Tool, VictoriaMetrics};
use support::victoria::{assert_reference_sequence, dump};

#[test]
fn reference_sequence_over_grpc_through_rotel() {
    if require(Tool::VictoriaMetrics).is_none() || require(Tool::Rotel).is_none() {
        return;
    }
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    record_as_orchestrator_and_server(|role: Role| {
        OtelBuilder::new()
            .role(role)
            .service_name("e2e-grpc")
            .protocol(OtlpProtocol::Grpc)
            .endpoint(rotel.grpc_endpoint())
            .export_interval(Duration::from_millis(300))
    });

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
