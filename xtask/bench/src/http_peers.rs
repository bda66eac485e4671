//! The HTTP server middlewares measured beside ours, each wrapped around the
//! same ready service: `POST /verify` answered `200` with a fixed body, no
//! I/O, so a request through a layered service costs the bare service plus
//! the middleware's metric work alone.

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http_body_util::Full;

/// The request every candidate serves.
pub fn verify_request() -> http::Request<Full<Bytes>> {
    let mut request = http::Request::new(Full::new(Bytes::from_static(b"{\"ok\":true}")));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = http::Uri::from_static("/verify");
    request
}

/// The fixed response every candidate returns.
pub type Reply = http::Response<Full<Bytes>>;

/// The inner service's future: ready at its first poll.
pub type ReadyReply = std::future::Ready<Result<Reply, Infallible>>;

/// The inner service: a fixed `200` response, ready at once, whatever the
/// request body (`Full` in the micro-benchmark, hyper's `Incoming` under wrk).
pub fn ready_service<B>(
) -> impl tower::Service<http::Request<B>, Response = Reply, Error = Infallible, Future = ReadyReply>
       + Clone {
    tower::service_fn(|_request: http::Request<B>| {
        std::future::ready(Ok(http::Response::new(Full::new(Bytes::from_static(
            b"{\"reward\":1.0}",
        )))))
    })
}

/// An SDK meter provider like the record benches' (a periodic reader every
/// hour into [`crate::peers::DiscardExporter`]: nothing is exported while
/// measuring), installed as the global one `opentelemetry-instrumentation-tower`
/// takes its meter from. Keep it alive for as long as the layer records.
pub fn global_otel_provider() -> opentelemetry_sdk::metrics::SdkMeterProvider {
    let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(crate::peers::DiscardExporter)
        .with_interval(std::time::Duration::from_secs(3600))
        .build();
    let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(reader)
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());
    provider
}

/// Polls `future` to completion on this thread (every future here is ready
/// at its first poll or after a few; none waits on I/O).
///
/// ```
/// assert_eq!(gym_bench::http_peers::block_on(async { 7 }), 7);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
