//! A resources server: a hyper 1 HTTP service with `POST /verify` (a small
//! JSON task in, a pass/fail JSON verdict out) that records `gym.verify.*`
//! around its handler with the server role, and every request into
//! `http.server.request.duration` through the API's tower layer (route
//! `/verify`, or none for an unknown path).

use std::convert::Infallible;
use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use gym_metrics_api::{HttpServerMetricsLayer, Role, RouteTable, VerifyTimer};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tower::Layer;

use super::args::{ServerConfig, Simulation};
use super::child::{loopback, report_every_second, stop_requested, LocalTally, VERIFY_FAMILY};
use super::protocol::{emit, Event};
use super::rng::Rng;
use super::verdict::{draw, Outcome};
use crate::backend;

/// Every route this server answers: the only values `http.route` takes.
const ROUTES: [&str; 1] = ["/verify"];

/// Salt of the random streams verdicts are drawn from (one per task).
const VERDICT_STREAM: u64 = 0x5E4F_1D1C_7000_0000;

/// The body of `POST /verify`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Task {
    /// Which rollout this is, as the agent numbers them.
    pub task_id: u64,
    /// The rollout's final answer, to be verified.
    pub answer: String,
}

/// The answer of `POST /verify`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Verdict {
    /// The task this verdict is for.
    pub task_id: u64,
    /// Whether the rollout passed.
    pub passed: bool,
}

struct State {
    simulation: Simulation,
    tally: Arc<LocalTally>,
}

/// Runs one resources server until asked to stop.
///
/// # Errors
/// The backend could not be installed, or the listener could not be bound.
pub async fn run(cfg: ServerConfig) -> Result<(), Box<dyn Error>> {
    let guard = backend::install(
        Role::server(cfg.name.clone(), "resources"),
        loopback(cfg.metrics_port),
    )?;
    let listener = TcpListener::bind(loopback(0)).await?;
    let metrics_layer = HttpServerMetricsLayer::new(RouteTable::new(ROUTES)?);
    let tally = Arc::new(LocalTally::default());
    let state = Arc::new(State {
        simulation: cfg.simulation.clone(),
        tally: Arc::clone(&tally),
    });
    emit(&Event::Ready {
        verify_addr: Some(listener.local_addr()?),
        metrics_addr: guard.metrics_addr(),
    });
    let reporter = tokio::spawn(report_every_second(
        Arc::clone(&tally),
        guard.reader(),
        VERIFY_FAMILY,
    ));

    let stop = stop_requested();
    tokio::pin!(stop);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            why = &mut stop => {
                eprintln!("{}: stopping ({why})", cfg.name);
                break;
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let state = Arc::clone(&state);
                    connections.spawn(serve_connection(stream, state, metrics_layer.clone()));
                }
                Err(e) => eprintln!("{}: accept failed: {e}", cfg.name),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(cfg.simulation.drain, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        eprintln!(
            "{}: {} connection(s) still open after {:?}; dropping them",
            cfg.name,
            connections.len(),
            cfg.simulation.drain
        );
        connections.abort_all();
    }
    tokio::time::sleep(cfg.simulation.linger).await;
    reporter.abort();
    emit(&Event::Final(
        tally.snapshot(&guard.reader(), VERIFY_FAMILY),
    ));
    guard.shutdown()
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    state: Arc<State>,
    metrics: HttpServerMetricsLayer,
) {
    // A tower service behind the metrics layer, handed to hyper as a hyper service.
    let service = TowerToHyperService::new(
        metrics.layer(tower::service_fn(move |req| route(req, Arc::clone(&state)))),
    );
    // A client that hangs up mid-request is its own problem; nothing to report.
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

async fn route(
    req: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(match (req.method(), req.uri().path()) {
        (&Method::POST, "/verify") => verify(req, &state).await,
        (_, "/verify") => json(
            StatusCode::METHOD_NOT_ALLOWED,
            r#"{"error":"use POST /verify"}"#.into(),
        ),
        _ => json(
            StatusCode::NOT_FOUND,
            r#"{"error":"the only route is POST /verify"}"#.into(),
        ),
    })
}

/// The handler: everything inside is timed, and anything but a marked pass
/// (a fail verdict, a bad request, a handler error) records a failed verification.
async fn verify(req: Request<Incoming>, state: &State) -> Response<Full<Bytes>> {
    let mut timer = VerifyTimer::start();
    let started = Instant::now();
    let answer = verify_inner(req, state, &mut timer).await;
    state.tally.record(started.elapsed(), answer.passed);
    drop(timer); // records now, a failure unless marked
    json(answer.status, answer.body)
}

async fn verify_inner(req: Request<Incoming>, state: &State, timer: &mut VerifyTimer) -> Answer {
    let task = match req.into_body().collect().await {
        Ok(body) => serde_json::from_slice::<Task>(&body.to_bytes()),
        Err(e) => return Answer::error(StatusCode::BAD_REQUEST, &format!("unreadable body: {e}")),
    };
    let task = match task {
        Ok(task) => task,
        Err(e) => {
            return Answer::error(
                StatusCode::BAD_REQUEST,
                &format!("expected {{\"task_id\": N, \"answer\": \"...\"}}: {e}"),
            )
        }
    };
    // Drawn from the task, not from the arrival order: with `--seed` a task
    // gets the same verdict on any server, whatever the timing.
    let (work, outcome) = draw(
        &mut Rng::for_stream(state.simulation.seed ^ VERDICT_STREAM, task.task_id),
        &state.simulation,
    );
    tokio::time::sleep(work).await;
    match outcome {
        Outcome::HandlerError => Answer::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "simulated verifier failure",
        ),
        Outcome::Pass | Outcome::Fail => {
            let passed = outcome == Outcome::Pass;
            if passed {
                timer.succeeded();
            }
            let verdict = Verdict {
                task_id: task.task_id,
                passed,
            };
            match serde_json::to_string(&verdict) {
                Ok(body) => Answer {
                    status: StatusCode::OK,
                    passed,
                    body,
                },
                Err(e) => Answer::error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
            }
        }
    }
}

/// A response under construction, remembering whether it is a pass.
struct Answer {
    status: StatusCode,
    passed: bool,
    body: String,
}

impl Answer {
    fn error(status: StatusCode, message: &str) -> Self {
        Self {
            status,
            passed: false,
            body: serde_json::json!({ "error": message }).to_string(),
        }
    }
}

fn json(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}
