//! OTLP/gRPC into rotel, which forwards to VictoriaMetrics; read back with PromQL.
//!
//! Not over http/json: rotel (the rotel-agent 0.0.1-alpha10 that the PyPI
//! package 0.0.1a15 ships) accepts OTLP/JSON but reads the specification's
//! string-encoded 64-bit integers as 0 (every count and bucket, the fleet
//! size) and drops the histograms; VictoriaMetrics answers OTLP/JSON with
//! 400. With no receiver here that reads OTLP/JSON right, http/json's exact
//! values are checked at the fake collector (`tests/it/http_json.rs`).
#![cfg(feature = "grpc")]

use crate::support;

use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
use gym_testkit::{require, Rotel, Tool, VictoriaMetrics};
use support::record_as_orchestrator_and_server;
use support::victoria::{assert_reference_sequence, dump};

#[test]
fn reference_sequence_over_grpc_through_rotel() {
    require(Tool::VictoriaMetrics);
    require(Tool::Rotel);
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
