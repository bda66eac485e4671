//! Accepting connections within the cap until shutdown (after a final scrape
//! when one is awaited), then draining the open ones. At the cap, a
//! connection accepted waits for room (`live_connections`) and nothing more is
//! accepted meanwhile: the others wait in the kernel's queue, in order.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};

use super::connection;
use super::final_scrape::FinalScrape;
use super::live_connections::Admission;
use super::stats::Event;
use crate::endpoint::endpoint_state::Shared;
use crate::endpoint::web_security::protection::TlsSource;
use crate::handle::PrometheusHandle;

/// How long open connections get to finish their answers at shutdown.
const DRAIN_DEADLINE: Duration = Duration::from_secs(1);

/// The longest the accept loop waits for an evicted connection to close (it
/// closes at its task's next poll, on this same thread: at once).
const EVICTION_DEADLINE: Duration = Duration::from_secs(1);

/// After an `accept` that failed for want of descriptors or memory, wait
/// this long: the listener stays readable, so retrying at once would spin.
const RESOURCE_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// What the guard asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    Now,
    /// Serve on until a final scrape is answered or `max_wait` passes.
    AfterFinalScrape {
        max_wait: Duration,
    },
}

/// Serves until `stop` says so (or its sender is gone); the listener is
/// closed and the connections drained before this returns.
pub(crate) async fn serve(
    listener: TcpListener,
    mut tls: Option<TlsSource>,
    handle: PrometheusHandle,
    shared: Arc<Shared>,
    mut stop: oneshot::Receiver<Stop>,
) -> FinalScrape {
    let (drain, drained) = watch::channel(false);
    // Set once a final scrape is awaited: since when, and for how long.
    let mut awaiting: Option<(Instant, Duration)> = None;
    // A connection accepted, waiting for room within the cap.
    let mut waiting: Option<TcpStream> = None;
    let cap = shared.limits.max_connections;
    let outcome = loop {
        tokio::select! {
            request = &mut stop, if awaiting.is_none() => match request {
                Ok(Stop::AfterFinalScrape { max_wait }) => {
                    shared.final_scrape.arm();
                    awaiting = Some((Instant::now(), max_wait));
                }
                Ok(Stop::Now) | Err(_) => break FinalScrape::NotAwaited,
            },
            () = shared.final_scrape.wait_answered(), if awaiting.is_some() => {
                let waited = awaiting.map(|(since, _)| since.elapsed()).unwrap_or_default();
                log::info!(target: "gym_metrics", "the final scrape was answered {waited:?} after shutdown was asked for; the metrics endpoint stops");
                break FinalScrape::Answered { waited };
            }
            () = wait_out(awaiting) => {
                let waited = awaiting.map(|(_, max_wait)| max_wait).unwrap_or_default();
                log::warn!(target: "gym_metrics", "no scrape came within {waited:?} of shutdown; the metrics endpoint stops without one (what was recorded since the last scrape is not in Prometheus)");
                break FinalScrape::TimedOut { waited };
            }
            accepted = listener.accept(), if waiting.is_none() => match accepted {
                Ok((stream, _peer)) => {
                    shared.counters.count(Event::Accepted);
                    waiting = Some(stream);
                }
                Err(e) => accept_failed(&e, &shared).await,
            },
            admission = shared.live_connections.admit(cap, shared.clock), if waiting.is_some() => {
                if let Some(stream) = waiting.take() {
                    serve_admitted(stream, admission, tls.as_mut(), &handle, &shared, &drained).await;
                }
            }
        }
    };
    // The port is free from here; connections get a moment to finish.
    drop(listener);
    let _ = drain.send(true);
    if tokio::time::timeout(DRAIN_DEADLINE, shared.live_connections.emptied())
        .await
        .is_err()
    {
        log::debug!(target: "gym_metrics", "metrics connections still open after {DRAIN_DEADLINE:?} of shutdown are closed");
    }
    outcome
}

/// Resolves when the awaited final scrape's time is up; never if none is awaited.
async fn wait_out(awaiting: Option<(Instant, Duration)>) {
    match awaiting {
        Some((since, max_wait)) => tokio::time::sleep_until((since + max_wait).into()).await,
        None => std::future::pending().await,
    }
}

/// Serves `stream`, admitted; when another connection made room for it,
/// nothing more is accepted until that one's socket is closed.
async fn serve_admitted(
    stream: TcpStream,
    Admission { state, evicted }: Admission,
    tls: Option<&mut TlsSource>,
    handle: &PrometheusHandle,
    shared: &Arc<Shared>,
    drained: &watch::Receiver<bool>,
) {
    let cap = shared.limits.max_connections;
    // The handshake runs on the connection's task, under its watchdog: it
    // holds a place within the cap, is evictable, and ends at the idle
    // timeout like any connection with no request.
    let tls = tls.map(|source| source.acceptor(shared));
    tokio::spawn(connection::serve(
        stream,
        tls,
        state,
        Arc::clone(shared),
        handle.clone(),
        drained.clone(),
    ));
    // Let the connections run (this one's first look at its socket, the
    // others' answers) before the next is accepted: under a flood of new
    // connections, one just made would otherwise become the oldest before
    // it had read its request, and go at the cap.
    tokio::task::yield_now().await;
    if let Some(evicted) = evicted {
        shared.counters.count(Event::Evicted);
        if let Some(held_back) = shared.log.admit("evicted") {
            log::warn!(target: "gym_metrics", "the metrics endpoint holds its most connections ({cap}, a quarter of the descriptor limit): closed the oldest one (one waiting for a request, answering a pipelined one, or slow for a second first; else whatever it was doing, past its first 100 ms and not waiting for a password check) to make room ({held_back})");
        }
        // Accept nothing more until its socket is closed: a burst of
        // connections would otherwise hold a descriptor each until the
        // evicted tasks next ran, far past the cap.
        if tokio::time::timeout(EVICTION_DEADLINE, evicted.wait_closed())
            .await
            .is_err()
        {
            if let Some(held_back) = shared.log.admit("slow eviction") {
                log::debug!(target: "gym_metrics", "an evicted metrics connection took over {EVICTION_DEADLINE:?} to close ({held_back})");
            }
        }
    }
}

async fn accept_failed(e: &std::io::Error, shared: &Shared) {
    shared.counters.count(Event::AcceptError);
    if let Some(held_back) = shared.log.admit("accept failed") {
        log::warn!(target: "gym_metrics", "accepting a metrics connection failed: {e}; the endpoint keeps serving the others ({held_back})");
    }
    // A client that gave up before its connection was accepted costs nothing
    // to skip; anything else (out of descriptors: EMFILE, ENFILE; out of
    // memory) would fail again at once.
    let clients_fault = matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::Interrupted
            | std::io::ErrorKind::WouldBlock
    );
    if !clients_fault {
        tokio::time::sleep(RESOURCE_ERROR_PAUSE).await;
    }
}
