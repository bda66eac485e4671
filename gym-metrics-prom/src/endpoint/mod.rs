//! The scrape endpoint: hyper 1 on a current-thread tokio runtime that runs
//! on a thread of its own, so the application needs no runtime.
//!
//! It must never take its host down, so it holds at most a quarter of the
//! process's descriptors (`connections/limits.rs`), and no client can pin a
//! place within that cap: a new connection is never refused, the oldest
//! connection waiting for a request makes room for it, else the oldest past
//! its first 100 ms whatever it is doing, but never one whose request waits
//! for its password check (when none may go, the new one waits for room and
//! the rest wait in the kernel's queue, in order:
//! `connections/live_connections.rs`); a connection is closed after 10 s
//! without a request, or when an answer is not all on the socket 10 s after
//! its request, whatever the client reads meanwhile; and each is answered
//! one request at a time: a request sent before the answer before it was
//! out is answered with `Connection: close`, and is its last
//! (`connections/connection.rs`). Past 8 MiB of renders held by answers not
//! yet read, scrapes share the newest render (`renders.rs`), so slow readers
//! hold one copy of a large exposition, not one each. Every line a client
//! can cause is logged at most once a minute per cause (the kit's
//! [`log_limiter`](gym_metrics_kit::log_limiter)); the counts are in
//! [`EndpointStats`].
//!
//! Well-kept crates do what they can: hyper-util runs hyper on tokio
//! (`TokioIo`, `TokioTimer`, hence hyper's header-read timeout), rustls
//! through tokio-rustls does TLS, `web_security/web_config.rs` reads
//! exporter-toolkit's file. What hyper 1 lacks is written here, once: it
//! has no idle timeout (no request for a while), no write timeout (an
//! answer going nowhere, hyperium/hyper#1628, #3852) and no bound on
//! pipelining (it answers the requests a client sends without reading one
//! after another, so that connection is never idle; `pipeline_flush` only
//! batches their writes), and neither hyper-util nor tower-http adds one
//! that sees the socket. So `connections/activity_io.rs` reports the
//! socket's reads, full writes and flushes, `connections/connection_state.rs`
//! makes of them what the connection is doing (idle or busy, since when, a
//! request pipelined or not), the watchdog in `connections/connection.rs`
//! closes it on either timeout and its handler closes it after a pipelined
//! request; the connection cap with its eviction
//! (`connections/live_connections.rs`) has no crate either. The rest of the
//! crate comes in through [`Endpoint`] alone (started with the web
//! configuration's [`Protection`]).
//!
//! | file or folder | what it holds |
//! |---|---|
//! | `mod.rs` | [`Endpoint`]: the runtime's thread, started and stopped |
//! | `connections/` | accepting within the cap, serving each connection under its watchdog, making room, the counts, the final scrape |
//! | `web_security/` | the web configuration file, TLS, basic auth, and the warning for an endpoint exposed without them |
//! | `respond.rs` | the answer to one request: `/metrics`, `/sd`, 404, 405 |
//! | `negotiate.rs` | content negotiation: the format (`Accept`) and gzip (`Accept-Encoding`) |
//! | `renders.rs` | the renders the answers hold, shared past a budget |
//! | `endpoint_state.rs` | what the accept loop, every connection and the guard share: limits, clock, live connections, counts, renders, the log limiter, basic auth |

mod connections;
mod endpoint_state;
mod negotiate;
mod renders;
mod respond;
pub(crate) mod web_security;

use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::error::{BuildError, ShutdownError};
use crate::handle::PrometheusHandle;
use connections::accept_loop::{self, Stop};
use connections::limits::Limits;
use endpoint_state::Shared;
use web_security::exposure;

use connections::final_scrape::FinalScrape;
pub use connections::stats::EndpointStats;
pub(crate) use web_security::protection::Protection;

/// A running listener; stopped (and its port freed) on drop.
#[derive(Debug)]
pub(crate) struct Endpoint {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    final_scrape_wait: Option<Duration>,
    stop: Option<oneshot::Sender<Stop>>,
    thread: Option<JoinHandle<FinalScrape>>,
}

impl Endpoint {
    /// Serves `handle` on `listener` from a new thread. Every error (runtime,
    /// socket, thread) surfaces here, before anything is served. With
    /// `final_scrape_wait`, shutdown waits up to that long for one more
    /// scrape. `protection` is the web configuration's TLS and basic auth.
    pub(crate) fn start(
        listener: StdTcpListener,
        handle: PrometheusHandle,
        final_scrape_wait: Option<Duration>,
        protection: Protection,
    ) -> Result<Self, BuildError> {
        let local_addr = listener.local_addr().map_err(BuildError::Runtime)?;
        listener
            .set_nonblocking(true)
            .map_err(BuildError::Runtime)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(BuildError::Runtime)?;
        let listener = {
            let _context = runtime.enter();
            TcpListener::from_std(listener).map_err(BuildError::Runtime)?
        };
        let limits = Limits::for_this_process();
        let scheme = protection.scheme();
        let authenticates = protection.authenticates();
        #[cfg_attr(not(feature = "web-config"), allow(unused_mut))]
        let mut shared = Shared::new(limits);
        #[cfg(feature = "web-config")]
        {
            shared.basic_auth = protection.basic_auth;
        }
        let shared = Arc::new(shared);
        let tls = protection.tls;
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("gym-metrics-prom".into())
                .spawn(move || {
                    let outcome = runtime
                        .block_on(accept_loop::serve(listener, tls, handle, shared, stopped));
                    // Dropping the runtime closes what is left open.
                    drop(runtime);
                    outcome
                })
                .map_err(BuildError::Runtime)?
        };
        log::info!(
            target: "gym_metrics",
            "serving Prometheus metrics at {scheme}://{local_addr}/metrics (at most {} connections: a quarter of the descriptor limit {})",
            limits.max_connections,
            limits.descriptor_limit
        );
        if let Some(warning) =
            exposure::unprotected_exposure_warning(local_addr).filter(|_| !authenticates)
        {
            log::warn!(target: "gym_metrics", "{warning}");
        }
        Ok(Self {
            local_addr,
            shared,
            final_scrape_wait,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub(crate) fn stats(&self) -> EndpointStats {
        self.shared.stats()
    }

    /// Stops serving (after the final scrape, when one is awaited) and waits
    /// for the thread; the port is free on return, whatever the result. A
    /// second call does nothing.
    ///
    /// Errors: [`ShutdownError::FinalScrapeMissed`] when a final scrape was
    /// awaited and none came; [`ShutdownError::EndpointPanicked`] when the
    /// thread had panicked (its listener was dropped as it unwound).
    pub(crate) fn stop(&mut self) -> Result<(), ShutdownError> {
        if let Some(stop) = self.stop.take() {
            let request = match self.final_scrape_wait {
                Some(max_wait) => Stop::AfterFinalScrape { max_wait },
                None => Stop::Now,
            };
            // The thread may already be gone; joining it says why.
            let _ = stop.send(request);
        }
        let outcome = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => FinalScrape::EndpointGone,
            None => return Ok(()),
        };
        match outcome {
            FinalScrape::NotAwaited | FinalScrape::Answered { .. } => Ok(()),
            FinalScrape::TimedOut { waited } => Err(ShutdownError::FinalScrapeMissed { waited }),
            FinalScrape::EndpointGone => Err(ShutdownError::EndpointPanicked),
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            log::error!(target: "gym_metrics", "{e}");
        }
    }
}
