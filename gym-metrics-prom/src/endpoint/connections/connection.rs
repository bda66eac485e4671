//! Serving one connection: hyper's HTTP/1 with bounded buffers and one
//! answer at a time, under a watchdog that closes it when idle for too long,
//! when an answer is not written out in time, when evicted, and gracefully
//! when the endpoint drains.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::header::CONNECTION;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::activity_io::ActivityIo;
use super::connection_state::{ConnectionState, Expiry};
use super::stats::Event;
use crate::endpoint::endpoint_state::Shared;
use crate::endpoint::respond;
#[cfg(feature = "web-config")]
use crate::endpoint::web_security::basic_auth;
use crate::endpoint::web_security::protection::ConnectionTls;
use crate::handle::PrometheusHandle;

/// The largest request head read (hyper's default is ~400 KiB): a scrape's
/// head is a few hundred bytes, and 512 hostile connections then hold 32 MiB
/// at most.
const MAX_REQUEST_HEAD_BYTES: usize = 64 * 1024;

/// Serves `stream` (after a TLS handshake, with `tls`) until the client is
/// done, a timeout or eviction closes it, or the endpoint drains (`drain`
/// turns true).
pub(crate) async fn serve(
    stream: TcpStream,
    tls: Option<ConnectionTls>,
    state: Arc<ConnectionState>,
    shared: Arc<Shared>,
    handle: PrometheusHandle,
    #[cfg_attr(not(feature = "web-config"), allow(unused_mut))] mut drain: watch::Receiver<bool>,
) {
    let _registered = Registered {
        shared: Arc::clone(&shared),
        state: Arc::clone(&state),
    };
    // Beneath TLS, so the watchdog sees the socket's own writes and flushes.
    let io = ActivityIo::new(stream, Arc::clone(&state), Arc::clone(&shared));
    match tls {
        None => serve_http(TokioIo::new(io), state, shared, handle, drain).await,
        #[cfg(feature = "web-config")]
        Some(acceptor) => {
            if let Some(io) = handshake(acceptor, io, &state, &shared, &mut drain).await {
                serve_http(TokioIo::new(io), state, shared, handle, drain).await;
            }
        }
        #[cfg(not(feature = "web-config"))]
        Some(never) => match never {},
    }
}

/// The TLS handshake, under the same watchdog as requests: a client that
/// never finishes it is closed at the idle timeout (or evicted at the cap),
/// one that fails it (plaintext to the TLS port, no or an untrusted client
/// certificate) at once; counted and logged at most once a minute.
#[cfg(feature = "web-config")]
async fn handshake(
    acceptor: ConnectionTls,
    io: ActivityIo,
    state: &ConnectionState,
    shared: &Shared,
    drain: &mut watch::Receiver<bool>,
) -> Option<tokio_rustls::server::TlsStream<ActivityIo>> {
    let mut accepting = std::pin::pin!(acceptor.accept(io));
    loop {
        if state.is_evicted() {
            return None;
        }
        let clock = state.clock();
        let next_expiry = state.next_expiry_ms(&shared.limits);
        tokio::select! {
            accepted = accepting.as_mut() => match accepted {
                Ok(stream) => return Some(stream),
                Err(e) => {
                    shared.counters.count(Event::TlsHandshakeFailed);
                    if let Some(held_back) = shared.log.admit("tls handshake failed") {
                        log::warn!(target: "gym_metrics", "a metrics connection's TLS handshake failed: {e} (a plaintext request to the https port, or a client certificate that is missing or not signed by client_ca_file); closed it ({held_back})");
                    }
                    return None;
                }
            },
            () = state.changed() => {}
            () = tokio::time::sleep_until(clock.instant_at(next_expiry)) => {
                if let Some(expiry) = state.expired(&shared.limits, clock.now_ms()) {
                    close_expired(shared, expiry);
                    return None;
                }
            }
            _ = drain.changed() => return None,
        }
    }
}

/// hyper's HTTP/1 over `io` (plain or TLS), under the watchdog.
async fn serve_http<I>(
    io: I,
    state: Arc<ConnectionState>,
    shared: Arc<Shared>,
    handle: PrometheusHandle,
    mut drain: watch::Receiver<bool>,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = {
        let (state, shared) = (Arc::clone(&state), Arc::clone(&shared));
        service_fn(move |request| {
            let (handle, state, shared) = (handle.clone(), Arc::clone(&state), Arc::clone(&shared));
            async move { Ok::<_, Infallible>(answer(&handle, &request, &state, &shared).await) }
        })
    };
    // The timer enables hyper's header-read timeout (30 s; the idle timeout
    // below comes first); the buffer cap answers 431 to a head over 64 KiB,
    // so each connection's memory stays bounded.
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .max_header_size(MAX_REQUEST_HEAD_BYTES)
        .max_buf_size(MAX_REQUEST_HEAD_BYTES)
        // A client that sends its request and then shuts its side
        // (`printf ... | nc`) still gets the answer.
        .half_close(true)
        .serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);
    let mut draining = false;
    loop {
        if state.is_evicted() {
            // Counted and logged by the accept loop, which chose it.
            return;
        }
        let next_expiry = state.next_expiry_ms(&shared.limits);
        let clock = state.clock();
        tokio::select! {
            ended = connection.as_mut() => {
                if let Err(e) = ended {
                    if let Some(held_back) = shared.log.admit("connection error") {
                        log::debug!(target: "gym_metrics", "metrics connection ended: {e} ({held_back})");
                    }
                }
                return;
            }
            () = state.changed() => {}
            () = tokio::time::sleep_until(clock.instant_at(next_expiry)) => {
                if let Some(expiry) = state.expired(&shared.limits, clock.now_ms()) {
                    close_expired(&shared, expiry);
                    return;
                }
            }
            _ = drain.changed(), if !draining => {
                // An idle connection closes now; one answering a request
                // once its response is written.
                if state.is_idle() {
                    return;
                }
                draining = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The response to `request`, holding the connection's request-in-progress
/// mark until hyper is done with it; a final scrape tells the watch once its
/// last frame goes out. With basic auth, refused credentials get a refusal
/// and nothing is rendered. A pipelined request (sent before the answer
/// before it was out) is answered with `Connection: close`, and hyper reads
/// no request after it: a client that pipelines a batch and reads nothing
/// has two of them answered.
async fn answer<B>(
    handle: &PrometheusHandle,
    request: &Request<B>,
    state: &Arc<ConnectionState>,
    shared: &Shared,
) -> Response<impl hyper::body::Body<Data = Bytes, Error = Infallible> + Send + 'static + use<B>> {
    let in_progress = state.request_started();
    let (mut response, is_final) = match refusal(request, state, shared).await {
        Some(refused) => (refused, false),
        None => {
            // Read before rendering: a final scrape must hold everything
            // recorded before shutdown was asked for.
            // A scrape after shutdown was asked for is rendered afresh.
            let armed = shared.final_scrape.is_armed();
            let may_be_final = armed
                && request.method() == Method::GET
                && request.uri().path() == respond::METRICS_PATH;
            let response = respond::respond(handle, &shared.renders, armed, request);
            let is_final = may_be_final && response.status() == StatusCode::OK;
            (response, is_final)
        }
    };
    if in_progress.pipelined() {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        shared.counters.count(Event::PipeliningClose);
        if let Some(held_back) = shared.log.admit("pipelining") {
            log::debug!(target: "gym_metrics", "a metrics client sent a request before reading the answer before it (pipelining): answered it and closed the connection, one answer at a time ({held_back})");
        }
    }
    response.map(move |body: Full<Bytes>| {
        body.map_frame(move |frame: Frame<Bytes>| {
            if is_final {
                in_progress.final_scrape_handed_over();
            }
            frame
        })
    })
}

/// The answer refusing `request`'s credentials, if basic auth is on and
/// refuses them. The connection is not evicted while its check waits or
/// runs (a cached verdict is found in the same poll, so it never shows).
#[cfg(feature = "web-config")]
async fn refusal<B>(
    request: &Request<B>,
    state: &ConnectionState,
    shared: &Shared,
) -> Option<Response<Full<Bytes>>> {
    let auth = shared.basic_auth.as_ref()?;
    let verdict = {
        let _checking = shared.live_connections.checking(state);
        auth.check(request.headers()).await
    };
    basic_auth::refusal(verdict, &shared.counters, &shared.log)
}

#[cfg(not(feature = "web-config"))]
async fn refusal<B>(
    _request: &Request<B>,
    _state: &ConnectionState,
    _shared: &Shared,
) -> Option<Response<Full<Bytes>>> {
    None
}

fn close_expired(shared: &Shared, expiry: Expiry) {
    let limits = &shared.limits;
    match expiry {
        Expiry::Idle => {
            shared.counters.count(Event::IdleTimeout);
            if let Some(held_back) = shared.log.admit("idle timeout") {
                log::debug!(
                    target: "gym_metrics",
                    "closed a metrics connection with no request for {:?} ({held_back})",
                    limits.idle_timeout
                );
            }
        }
        Expiry::ResponseDeadline => {
            shared.counters.count(Event::WriteTimeout);
            if let Some(held_back) = shared.log.admit("write timeout") {
                log::warn!(
                    target: "gym_metrics",
                    "closed a metrics connection whose answer was not all on the socket {:?} after its request (a client reading too slowly or not at all) ({held_back})",
                    limits.response_deadline
                );
            }
        }
    }
}

/// Removes the connection from the live connections however its task ends
/// (returned, or dropped with the runtime), and marks it closed. Declared
/// first in [`serve`], it is dropped last: after the socket.
struct Registered {
    shared: Arc<Shared>,
    state: Arc<ConnectionState>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.shared.live_connections.remove(self.state.id());
        self.state.mark_closed();
    }
}
