//! An RAII timer for one HTTP server request, usable in any handler.

use std::time::Instant;

use super::{HttpMethod, HttpServerRequest, UrlScheme};
use crate::facade::{group_enabled, record_http_server_request};
use crate::Group;

/// Times one request into `http.server.request.duration`. Reads the clock
/// only when a backend is installed.
///
/// [`HttpServerRequestTimer::finish`] records the response status; dropped
/// unfinished (a handler error, a panic, a client that went away) it records
/// the request without a status and with `error.type` `_OTHER`.
///
/// ```
/// use gym_metrics_api::{HttpMethod, HttpServerRequestTimer, RouteTable, UrlScheme};
/// let routes = RouteTable::new(["/verify"])?;
/// let timer = HttpServerRequestTimer::start(HttpMethod::Post, routes.matches("/verify"), UrlScheme::Http);
/// // ... handle the request ...
/// timer.finish(200);
/// # Ok::<(), gym_metrics_api::RouteTableError>(())
/// ```
#[must_use = "the request is timed until this value is finished or dropped"]
#[derive(Debug)]
pub struct HttpServerRequestTimer {
    start: Option<Instant>,
    method: HttpMethod,
    route: Option<&'static str>,
    scheme: UrlScheme,
}

impl HttpServerRequestTimer {
    /// Starts timing a request to `route` (a template from a
    /// [`crate::RouteTable`], or `None` when no route matched).
    ///
    /// ```
    /// use gym_metrics_api::{HttpMethod, HttpServerRequestTimer, UrlScheme};
    /// let t = HttpServerRequestTimer::start(HttpMethod::Get, None, UrlScheme::Http);
    /// t.finish(404);
    /// ```
    #[inline]
    pub fn start(method: HttpMethod, route: Option<&'static str>, scheme: UrlScheme) -> Self {
        Self {
            start: group_enabled(Group::Server).then(Instant::now),
            method,
            route,
            scheme,
        }
    }

    /// Records the request now, answered with `status`.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequestTimer, UrlScheme};
    /// HttpServerRequestTimer::start(HttpMethod::Post, Some("/verify"), UrlScheme::Http).finish(500);
    /// ```
    #[inline]
    pub fn finish(mut self, status: u16) {
        self.record(Some(status));
    }

    /// Stops timing without recording anything.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequestTimer, UrlScheme};
    /// HttpServerRequestTimer::start(HttpMethod::Get, None, UrlScheme::Http).discard();
    /// ```
    pub fn discard(mut self) {
        self.start = None;
    }

    #[inline]
    fn record(&mut self, status: Option<u16>) {
        if let Some(start) = self.start.take() {
            record_http_server_request(&HttpServerRequest::new(
                self.method,
                self.route,
                self.scheme,
                status,
                start.elapsed(),
            ));
        }
    }
}

impl Drop for HttpServerRequestTimer {
    #[inline]
    fn drop(&mut self) {
        self.record(None);
    }
}
