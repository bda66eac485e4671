//! The tower layer (feature `tower`): times every request through the
//! wrapped service into `http.server.request.duration`, and (feature
//! `trace-context`) runs the service in the caller's W3C trace context.
//!
//! A plain hyper 1 server uses it too: `hyper_util::service::TowerToHyperService`
//! turns the layered tower service into a hyper one, so this crate never
//! depends on hyper.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::trace_context::{enter, extract, Remote};
use super::{HttpMethod, HttpServerRequestTimer, RouteTable, UrlScheme};
use crate::facade::group_enabled;
use crate::Group;

/// A [`tower_layer::Layer`] recording `http.server.request.duration` for
/// every request, `http.route` from the [`RouteTable`] given here.
///
/// The duration runs from the call until the response head is ready (the
/// body streams after). A response records its status (and `error.type` for
/// a 5xx); a service error, or a request dropped before it answered, records
/// no status and `error.type` `_OTHER`. With no backend installed the layer
/// reads no clock and matches no route; under the `off` feature it compiles
/// to a plain call of the inner service.
///
/// With the feature `trace-context` and a backend installed, a request's
/// valid W3C `traceparent` (and `tracestate`) is made the current
/// OpenTelemetry context while the inner service is called and polled: a `VerifyTimer` started in the
/// handler then takes the caller's trace as its exemplar.
///
/// ```
/// use gym_metrics_api::{HttpServerMetricsLayer, RouteTable};
/// use tower::{service_fn, Layer, Service};
///
/// let layer = HttpServerMetricsLayer::new(RouteTable::new(["/verify", "/tasks/{id}"])?);
/// let mut service = layer.layer(service_fn(|req: http::Request<String>| async move {
///     let mut response = http::Response::new(String::new());
///     if req.uri().path() != "/verify" {
///         *response.status_mut() = http::StatusCode::NOT_FOUND;
///     }
///     Ok::<_, std::convert::Infallible>(response)
/// }));
/// let response = futures_lite_block_on(service.call(http::Request::new(String::new())));
/// # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// assert_eq!(response?.status(), 404);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// With hyper 1, wrap the layered service for `serve_connection`:
/// `hyper_util::service::TowerToHyperService::new(layer.layer(service))`
/// (see the gym-fleet resources server in `examples/src/fleet/server.rs`).
#[derive(Debug, Clone)]
pub struct HttpServerMetricsLayer {
    routes: Arc<RouteTable>,
    scheme: UrlScheme,
}

impl HttpServerMetricsLayer {
    /// A layer naming routes from `routes`, for a plain-HTTP listener.
    ///
    /// ```
    /// let layer = gym_metrics_api::HttpServerMetricsLayer::new(gym_metrics_api::RouteTable::new(["/verify"])?);
    /// assert!(format!("{layer:?}").contains("scheme: Http"));
    /// # Ok::<(), gym_metrics_api::RouteTableError>(())
    /// ```
    pub fn new(routes: RouteTable) -> Self {
        Self {
            routes: Arc::new(routes),
            scheme: UrlScheme::Http,
        }
    }

    /// The scheme the listener speaks (`url.scheme`); `http` unless set.
    ///
    /// ```
    /// use gym_metrics_api::{HttpServerMetricsLayer, RouteTable, UrlScheme};
    /// let _tls = HttpServerMetricsLayer::new(RouteTable::default()).scheme(UrlScheme::Https);
    /// ```
    pub fn scheme(mut self, scheme: UrlScheme) -> Self {
        self.scheme = scheme;
        self
    }
}

impl<S> Layer<S> for HttpServerMetricsLayer {
    type Service = HttpServerMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HttpServerMetrics {
            inner,
            routes: Arc::clone(&self.routes),
            scheme: self.scheme,
        }
    }
}

/// The service [`HttpServerMetricsLayer`] wraps around `S`.
///
/// ```
/// use gym_metrics_api::{HttpServerMetrics, HttpServerMetricsLayer, RouteTable};
/// use tower::{service_fn, Layer};
/// let inner = service_fn(|_: http::Request<()>| async { Ok::<_, std::io::Error>(http::Response::new(())) });
/// let _service: HttpServerMetrics<_> = HttpServerMetricsLayer::new(RouteTable::default()).layer(inner);
/// ```
#[derive(Debug, Clone)]
pub struct HttpServerMetrics<S> {
    inner: S,
    routes: Arc<RouteTable>,
    scheme: UrlScheme,
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for HttpServerMetrics<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = HttpServerMetricsFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let remote = extract(request.headers());
        let _entered = enter(&remote);
        let timer = group_enabled(Group::Server).then(|| {
            HttpServerRequestTimer::start(
                HttpMethod::from(request.method()),
                self.routes.matches(request.uri().path()),
                self.scheme,
            )
        });
        HttpServerMetricsFuture {
            inner: self.inner.call(request),
            timer,
            remote,
        }
    }
}

pin_project! {
    /// The response future of [`HttpServerMetrics`]: the inner future, the
    /// request's timer (none when nothing is installed), and the caller's
    /// trace context (feature `trace-context`).
    ///
    /// ```
    /// use gym_metrics_api::{HttpServerMetricsFuture, HttpServerMetricsLayer, RouteTable};
    /// use tower::{service_fn, Layer, Service};
    /// let mut s = HttpServerMetricsLayer::new(RouteTable::default())
    ///     .layer(service_fn(|_: http::Request<()>| async { Ok::<_, std::io::Error>(http::Response::new(())) }));
    /// let future = s.call(http::Request::new(()));
    /// drop(future); // dropped before answering: recorded as `_OTHER` when a backend is installed
    /// ```
    #[must_use = "futures do nothing unless polled"]
    pub struct HttpServerMetricsFuture<F> {
        #[pin]
        inner: F,
        timer: Option<HttpServerRequestTimer>,
        remote: Remote,
    }
}

impl<F, ResBody, E> Future for HttpServerMetricsFuture<F>
where
    F: Future<Output = Result<http::Response<ResBody>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = enter(this.remote);
        let output = std::task::ready!(this.inner.poll(cx));
        if let Some(timer) = this.timer.take() {
            match &output {
                Ok(response) => timer.finish(response.status().as_u16()),
                Err(_) => drop(timer), // records `_OTHER`, no status
            }
        }
        Poll::Ready(output)
    }
}
