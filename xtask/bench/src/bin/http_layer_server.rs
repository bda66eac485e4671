//! The wrk scenario's server: hyper 1 on a current-thread runtime answering
//! `POST /verify` with a fixed `200`, bare or through one HTTP middleware
//! (the same service and middlewares as `benches/http_layer.rs`).
//!
//! `http_layer_server <bare|ours|otel|axum-prometheus>`: prints
//! `http://ADDR/verify` on the first line of standard output, serves until
//! standard input closes.

use std::io::Read;
use std::process::ExitCode;

use gym_bench::http_peers::ready_service;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tower::Layer;

/// The middlewares, as the first argument names them.
const CANDIDATES: [&str; 4] = ["bare", "ours", "otel", "axum-prometheus"];

fn main() -> ExitCode {
    let candidate = std::env::args().nth(1).unwrap_or_default();
    if !CANDIDATES.contains(&candidate.as_str()) {
        eprintln!("usage: http_layer_server <{}>", CANDIDATES.join("|"));
        return ExitCode::from(2);
    }
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => {
            eprintln!("http_layer_server: bind: {e}");
            return ExitCode::FAILURE;
        }
    };
    let serving = std::thread::spawn(move || serve(listener, &candidate));
    // Serve until the parent closes our standard input.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(serving);
    ExitCode::SUCCESS
}

fn serve(listener: std::net::TcpListener, candidate: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // axum-prometheus spawns its upkeep task on the current runtime.
    let _entered = runtime.enter();
    // Installed before any request, kept for the process's life.
    let mut _prom = None;
    let mut _otel = None;
    match candidate {
        "ours" => {
            _prom = Some(
                gym_metrics_prom::PrometheusBuilder::new()
                    .install_recorder()
                    .map_err(|e| e.to_string())?,
            );
        }
        "otel" => {
            _otel = Some(gym_bench::http_peers::global_otel_provider());
        }
        _ => {}
    }
    let routes = gym_metrics_api::RouteTable::new(["/verify"]).map_err(|e| e.to_string())?;
    let ours = gym_metrics_api::HttpServerMetricsLayer::new(routes);
    let otel = match candidate {
        "otel" => Some(
            opentelemetry_instrumentation_tower::http::server::LayerBuilder::builder()
                .with_tracing(false)
                .build()
                .map_err(|e| format!("{e:?}"))?,
        ),
        _ => None,
    };
    let axum =
        (candidate == "axum-prometheus").then(|| axum_prometheus::PrometheusMetricLayer::pair().0);
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("http://{addr}/verify");
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        loop {
            let (stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
            let io = TokioIo::new(stream);
            let connection = http1::Builder::new();
            match (candidate, &otel, &axum) {
                ("ours", _, _) => {
                    let service = TowerToHyperService::new(ours.layer(ready_service()));
                    tokio::spawn(async move { connection.serve_connection(io, service).await });
                }
                (_, Some(otel), _) => {
                    let service = TowerToHyperService::new(otel.layer(ready_service()));
                    tokio::spawn(async move { connection.serve_connection(io, service).await });
                }
                (_, _, Some(axum)) => {
                    let service = TowerToHyperService::new(axum.layer(ready_service()));
                    tokio::spawn(async move { connection.serve_connection(io, service).await });
                }
                _ => {
                    let service = TowerToHyperService::new(ready_service());
                    tokio::spawn(async move { connection.serve_connection(io, service).await });
                }
            }
        }
    })
}
