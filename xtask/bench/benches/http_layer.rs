//! The metric work of one HTTP request through a server middleware, no I/O:
//! `tower::ServiceExt::oneshot` of a `POST /verify` on a ready service
//! returning a fixed `200`, bare and through each middleware, one process.
//! Ours is `gym_metrics_api::HttpServerMetricsLayer` with the prom backend
//! installed; the peers are `opentelemetry-instrumentation-tower` (on an SDK
//! meter provider, tracing off) and `axum-prometheus` (its default
//! `metrics-exporter-prometheus` recorder). The middleware's share is its
//! row minus the bare row.

use std::hint::black_box;

use gym_bench::http_peers::{block_on, ready_service, verify_request};
use gym_bench::{harness, Mode, Output};
use tower::{Layer, ServiceExt};

/// The bare service's row.
const BARE: &str = "bare service (no middleware)";
/// Ours.
const OURS: &str = "gym-metrics-api HttpServerMetricsLayer (prom installed)";

fn main() {
    let mode = Mode::current();
    let mut c = harness::criterion();
    let (handle, _installation) = gym_metrics_prom::PrometheusBuilder::new()
        .install_recorder()
        .expect("installing the prom recorder");
    let routes = gym_metrics_api::RouteTable::new(["/verify"]).expect("a valid route table");
    let ours = gym_metrics_api::HttpServerMetricsLayer::new(routes).layer(ready_service());

    let provider = gym_bench::http_peers::global_otel_provider();
    let otel_layer = opentelemetry_instrumentation_tower::http::server::LayerBuilder::builder()
        .with_tracing(false)
        .build()
        .expect("building the opentelemetry-instrumentation-tower layer");
    let otel = otel_layer.layer(ready_service());

    // axum-prometheus spawns its upkeep task on the current tokio runtime:
    // one is entered (never driven: no request here waits on it).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime for axum-prometheus");
    let _entered = runtime.enter();
    let (axum_layer, axum_handle) = axum_prometheus::PrometheusMetricLayer::pair();
    let axum = axum_layer.layer(ready_service());

    let bare = ready_service();
    let mut requests = [0u64; 4];
    let mut out = Output::new("http_layer");
    let mut t = harness::Table::new(&mut c, "http_layer threads_1", 1);
    requests[0] = t.run(BARE, |_| {
        black_box(block_on(bare.clone().oneshot(verify_request())).is_ok());
    });
    requests[1] = t.run(OURS, |_| {
        black_box(block_on(ours.clone().oneshot(verify_request())).is_ok());
    });
    requests[2] = t.run(
        "opentelemetry-instrumentation-tower 0.19 (SDK 0.33)",
        |_| {
            black_box(block_on(otel.clone().oneshot(verify_request())).is_ok());
        },
    );
    requests[3] = t.run("axum-prometheus 0.10", |_| {
        black_box(block_on(axum.clone().oneshot(verify_request())).is_ok());
    });
    out.set("threads_1", t.finish(mode));
    c.final_summary();

    // Every middleware recorded every request it served.
    let ours_count = handle
        .render()
        .lines()
        .find(|l| l.starts_with("http_server_request_duration_seconds_count{"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok());
    assert_eq!(ours_count, Some(requests[1]), "ours counts every request");
    let axum_text = axum_handle.render();
    let axum_count = axum_text
        .lines()
        .find(|l| l.starts_with("axum_http_requests_duration_seconds_count{"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok());
    assert_eq!(
        axum_count,
        Some(requests[3]),
        "axum-prometheus counts every request: {axum_text}"
    );
    drop(provider);
    out.write().expect("writing the http_layer figures");
}
