//! A resources server: a hyper 1 HTTP service with `POST /verify` (a small
//! JSON task in, a pass/fail JSON verdict out) that records `gym.verify.*`
//! around its handler with the server role, and every request into
//! `http.server.request.duration` through the API's tower layer (route
//! `/verify`, or none for an unknown path).
//!
//! It is meant to be copied, so it holds up against any client that can reach
//! its port, each limit a constant here or in [`super::task_body`] and
//! [`super::accept`]:
//! - the head must arrive within [`HEADER_READ_TIMEOUT`] (hyper's timer; it
//!   also closes an idle kept-alive connection) and fit [`MAX_REQUEST_HEAD_BYTES`] (431);
//! - the body must fit [`super::task_body::MAX_BODY_BYTES`] (413) and arrive
//!   within [`super::task_body::BODY_READ_TIMEOUT`] (408); one that is not a
//!   task is answered 400, and none of these is a verification;
//! - a verification that outlasts [`VERIFY_TIMEOUT`] is answered 503 and
//!   counted as a failed one (a verifier that hangs must not hold the caller);
//! - at most [`MAX_CONNECTIONS`] connections are served at once, and a failed
//!   accept (out of file descriptors) is retried after a pause, warned about
//!   at most every few seconds.

use std::convert::Infallible;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use gym_metrics_api::{HttpServerMetricsLayer, Role, RouteTable, VerifyTimer};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tower::Layer;

use super::accept::{GuardedListener, Slot, LOG_TARGET};
use super::args::{ServerConfig, Simulation};
use super::child::{loopback, report_every_second, stop_requested, LocalTally, VERIFY_FAMILY};
use super::protocol::{emit, Event};
use super::rng::Rng;
use super::roster::Kind;
use super::task_body::read_task;
use super::verdict::{draw, Outcome};
use crate::backend;

/// How long a client may take to send a whole request head, from the moment
/// the server waits for it: on a new connection and between two requests of
/// a kept-alive one. A head is a few hundred bytes; a client that trickles
/// it (slowloris) or sends nothing is cut off.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest request head (and read buffer) per connection: a `/verify`
/// head is ~150 bytes; hyper's default would let ~400 KiB in.
pub const MAX_REQUEST_HEAD_BYTES: usize = 16 * 1024;

/// The most connections served at once. The next ones wait in the kernel's
/// backlog; at the caps above, 256 hostile connections hold 4 MiB of head
/// buffers and 16 MiB of bodies at most.
pub const MAX_CONNECTIONS: usize = 256;

/// The longest a verification may run before it is answered 503 and counted
/// as failed. With the header and body bounds, every request ends within
/// 30 s, the agents' own call timeout.
pub const VERIFY_TIMEOUT: Duration = Duration::from_secs(20);

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
        Role::server(cfg.name.clone(), Kind::Server.server_type()),
        loopback(cfg.metrics_port),
        cfg.simulation.linger,
        // The orchestrator hands the web configuration down through the
        // environment (GYM_METRICS_WEB_CONFIG_FILE), which from_env reads.
        None,
    )?;
    metrics::describe_counter!(OUTCOMES, "Verifications by outcome (reason).");
    let mut listener = GuardedListener::new(
        TcpListener::bind(loopback(0)).await?,
        MAX_CONNECTIONS,
        "/verify",
    );
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
            (stream, slot) = listener.accept() => {
                let state = Arc::clone(&state);
                connections.spawn(serve_connection(stream, slot, state, metrics_layer.clone()));
                // Reaped here, not in a branch of their own, so that a closing
                // connection never cancels the accept loop's pause.
                while connections.try_join_next().is_some() {}
            }
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
    // `--linger` is the backend's final-scrape wait, spent in shutdown below.
    reporter.abort();
    emit(&Event::Final(
        tally.snapshot(&guard.reader(), VERIFY_FAMILY),
    ));
    guard.shutdown()
}

/// Serves one connection; its `slot` is freed when it ends.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    _slot: Slot,
    state: Arc<State>,
    metrics: HttpServerMetricsLayer,
) {
    // A tower service behind the metrics layer, handed to hyper as a hyper service.
    let service = TowerToHyperService::new(
        metrics.layer(tower::service_fn(move |req| route(req, Arc::clone(&state)))),
    );
    let served = http1::Builder::new()
        // The timer is what makes hyper enforce the header-read timeout.
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_REQUEST_HEAD_BYTES)
        .max_buf_size(MAX_REQUEST_HEAD_BYTES)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    // A client that hangs up or times out is its own problem: debug only.
    if let Err(e) = served {
        log::debug!(target: LOG_TARGET, "a /verify connection ended: {e}");
    }
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

/// The handler. A body that is not a task (too large, too slow, malformed)
/// is answered 4xx and is no verification. Once it is, everything is timed,
/// and anything but a marked pass (a fail verdict, a handler error, a
/// verification past [`VERIFY_TIMEOUT`]) records a failed verification.
async fn verify(req: Request<Incoming>, state: &State) -> Response<Full<Bytes>> {
    let task = match read_task(req.into_body()).await {
        Ok(task) => task,
        Err(refusal) => {
            let answer = Answer::error(refusal.status(), &refusal.to_string());
            return json(answer.status, answer.body);
        }
    };
    let mut timer = VerifyTimer::start();
    let started = Instant::now();
    let answer = tokio::time::timeout(VERIFY_TIMEOUT, verify_task(&task, state, &mut timer))
        .await
        .unwrap_or_else(|_elapsed| {
            Answer::error(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("the verification did not finish within {VERIFY_TIMEOUT:?}"),
            )
        });
    state.tally.record(started.elapsed(), answer.passed);
    drop(timer); // records now, a failure unless marked
    json(answer.status, answer.body)
}

/// The `metrics` counter of verification outcomes, by `reason`
/// (`fleet_verify_outcomes_total{reason=...}` on both paths).
pub const OUTCOMES: &str = "fleet.verify.outcomes";

async fn verify_task(task: &Task, state: &State, timer: &mut VerifyTimer) -> Answer {
    // Drawn from the task, not from the arrival order: with `--seed` a task
    // gets the same verdict on any server, whatever the timing.
    let (work, outcome) = draw(
        &mut Rng::for_stream(state.simulation.seed ^ VERDICT_STREAM, task.task_id),
        &state.simulation,
    );
    tokio::time::sleep(work).await;
    // A second, attributed instrument through the `metrics` crate, as a
    // server's own code would record it: the outcome, by a bounded reason.
    metrics::counter!(OUTCOMES, "reason" => outcome.reason()).increment(1);
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
