//! The scrape endpoint: hyper 1 on a current-thread tokio runtime that runs
//! on a thread of its own, so the application needs no runtime.

mod negotiate;
mod respond;

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::thread::JoinHandle;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::error::{BuildError, ShutdownError};
use crate::handle::PrometheusHandle;

/// The largest request head read (hyper's default is ~400 KiB): a scrape's
/// head is a few hundred bytes, and 512 hostile connections then hold 32 MiB
/// at most.
const MAX_REQUEST_HEAD_BYTES: usize = 64 * 1024;

/// A running listener; stopped (and its port freed) on drop.
#[derive(Debug)]
pub(crate) struct Endpoint {
    local_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Serves `handle` on `listener` from a new thread. Every error (runtime,
    /// socket, thread) surfaces here, before anything is served.
    pub(crate) fn start(
        listener: StdTcpListener,
        handle: PrometheusHandle,
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
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("gym-metrics-prom".into())
            .spawn(move || {
                runtime.block_on(serve(listener, handle, stopped));
                // Dropping the runtime cancels open connections.
                drop(runtime);
            })
            .map_err(BuildError::Runtime)?;
        log::info!(target: "gym_metrics", "serving Prometheus metrics at http://{local_addr}/metrics");
        Ok(Self {
            local_addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops the listener and waits for its thread: the port is free on
    /// return, also when the thread had panicked (its listener was dropped
    /// as it unwound). A second call does nothing.
    pub(crate) fn stop(&mut self) -> Result<(), ShutdownError> {
        if let Some(stop) = self.stop.take() {
            // The thread may already be gone; then there is nothing to stop.
            let _ = stop.send(());
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Err(_)) => Err(ShutdownError::EndpointPanicked),
            _ => Ok(()),
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

async fn serve(
    listener: TcpListener,
    handle: PrometheusHandle,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let handle = handle.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |request| {
                            let response = respond::respond(&handle, &request);
                            async move { Ok::<_, Infallible>(response) }
                        });
                        // The timer enables hyper's header-read timeout (30 s), so a
                        // client that never finishes its request cannot pin a connection;
                        // the buffer cap answers 431 to a head over 64 KiB, so
                        // each connection's memory stays bounded.
                        if let Err(e) = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .max_header_size(MAX_REQUEST_HEAD_BYTES)
                            .max_buf_size(MAX_REQUEST_HEAD_BYTES)
                            // A client that sends its request and then shuts its
                            // side (`printf ... | nc`) still gets the answer.
                            .half_close(true)
                            .serve_connection(TokioIo::new(stream), service)
                            .await
                        {
                            log::debug!(target: "gym_metrics", "metrics connection ended: {e}");
                        }
                    });
                }
                Err(e) => {
                    // E.g. out of file descriptors: keep serving the others.
                    log::warn!(target: "gym_metrics", "accepting a metrics connection failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            },
        }
    }
    // `listener` is dropped here: the port is released before the thread ends.
}
