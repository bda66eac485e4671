//! gRPC to rotel through a proxy that goes down mid-run: once it is back, the
//! exporter reconnects and VictoriaMetrics holds the exact totals, including
//! everything recorded during the outage.
#![cfg(feature = "grpc")]

use crate::support;

use std::time::Duration;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
use gym_testkit::{require, Rotel, Tool, VictoriaMetrics};
use support::tcp_proxy::TcpProxy;
use support::victoria::{dump, selector};
use support::*;

#[test]
fn grpc_totals_are_exact_after_the_collector_returns() {
    require(Tool::VictoriaMetrics);
    require(Tool::Rotel);
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    let rotel_addr = rotel
        .grpc_endpoint()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let mut proxy = TcpProxy::start(rotel_addr);
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::orchestrator())
        .service_name("e2e-grpc-restart")
        .protocol(OtlpProtocol::Grpc)
        .endpoint(format!("http://127.0.0.1:{}", proxy.port()))
        .export_interval(Duration::from_millis(200))
        .export_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let sel = selector("e2e-grpc-restart/orchestrator");
    let count = format!("gym_rollout_duration_ms_milliseconds_count{sel}");
    let wait = |expected: f64| {
        vm.wait_for(&count, Duration::from_secs(10), |s| {
            s.len() == 1 && s[0].value == expected
        })
        .unwrap_or_else(|e| panic!("{e}\n{}\nrotel: {}", dump(&vm), rotel.log_tail()))
    };

    record_reference_sequence(&recorder);
    wait(3.0);

    proxy.stop();
    let mut rollouts = rollout_values();
    for i in 0..200 {
        let ms = 7.0 + f64::from(i % 20) * 900.0;
        recorder.record_rollout_duration_ms(ms);
        rollouts.push(ms);
    }
    std::thread::sleep(Duration::from_millis(800)); // exports fail meanwhile
    let during = vm.query(&count).unwrap();
    assert_eq!(
        during[0].value, 3.0,
        "nothing may arrive while the proxy is down"
    );
    proxy.restart();

    wait(rollouts.len() as f64);
    let sum = vm
        .query(&format!("gym_rollout_duration_ms_milliseconds_sum{sel}"))
        .unwrap();
    assert_eq!(sum[0].value, rollouts.iter().sum::<f64>());
    let le_1000 = vm
        .query(r#"gym_rollout_duration_ms_milliseconds_bucket{service_name="e2e-grpc-restart/orchestrator",le="1000"}"#)
        .unwrap();
    let at_most_1000 = rollouts.iter().filter(|&&v| v <= 1000.0).count() as f64;
    assert_eq!(le_1000[0].value, at_most_1000);
    guard.shutdown().unwrap();
}
