//! An application that has its own Tokio runtime: building, exporting and
//! shutting down from inside it neither panics nor deadlocks, for both
//! protocols (the backend never blocks on the application's runtime).
#![cfg(any(feature = "http-proto", feature = "grpc"))]

use crate::support;

#[cfg(feature = "grpc")]
use std::net::TcpListener;
use std::time::Duration;
#[cfg(feature = "grpc")]
use std::time::Instant;

#[cfg(feature = "http-proto")]
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
#[cfg(feature = "grpc")]
use gym_metrics_otel::OtlpProtocol;
#[cfg(feature = "http-proto")]
use support::fake_collector::{histogram_point, Answer, FakeCollector};
use support::*;

fn app_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[cfg(feature = "http-proto")]
#[test]
fn http_from_inside_a_current_thread_runtime() {
    let collector = FakeCollector::start(Answer::Ok);
    app_runtime().block_on(async {
        let (recorder, guard) = OtelBuilder::new()
            .role(Role::orchestrator())
            .endpoint(collector.endpoint())
            .export_interval(Duration::from_millis(100))
            .build()
            .unwrap();
        record_reference_sequence(&recorder);
        guard.shutdown().unwrap();
    });
    let accepted = collector.accepted();
    let last = accepted.last().expect("the shutdown export");
    assert_eq!(
        histogram_point(last, Instrument::ROLLOUT_DURATION.name).count,
        3
    );
}

#[cfg(feature = "grpc")]
#[test]
fn grpc_from_inside_a_current_thread_runtime_is_bounded() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let deadline = Duration::from_secs(1);
    app_runtime().block_on(async {
        let (recorder, guard) = OtelBuilder::new()
            .role(Role::orchestrator())
            .protocol(OtlpProtocol::Grpc)
            .endpoint(format!("http://127.0.0.1:{port}"))
            .export_interval(Duration::from_millis(100))
            .export_timeout(Duration::from_millis(300))
            .shutdown_timeout(deadline)
            .build()
            .unwrap();
        record_reference_sequence(&recorder);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let start = Instant::now();
        let result = guard.shutdown();
        let took = start.elapsed();
        eprintln!("gRPC shutdown against a refusing collector took {took:?}: {result:?}");
        assert!(
            result.is_err(),
            "nothing listens, the final export must fail"
        );
        assert!(took < deadline + Duration::from_millis(300), "{took:?}");
    });
}
