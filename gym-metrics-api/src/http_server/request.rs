//! One finished HTTP server request, as the recorder receives it.

use std::time::Duration;

use super::status::{status_code_str, MAX_STATUS, MIN_STATUS};
use super::{HttpMethod, UrlScheme};

/// `error.type` when the request failed without a response status: the
/// service returned an error, or the request was dropped before it answered
/// (the client went away).
///
/// ```
/// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
/// // Dropped before it answered: no status, so the error type is `_OTHER`.
/// let dropped = HttpServerRequest::new(HttpMethod::Post, Some("/verify"), UrlScheme::Http, None, Default::default());
/// assert_eq!(dropped.error_type(), Some("_OTHER"));
/// ```
pub(crate) const ERROR_TYPE_OTHER: &str = "_OTHER";

/// One finished request of `http.server.request.duration`, with every
/// attribute already reduced to a bounded value.
///
/// Built only by [`HttpServerRequest::new`], which keeps the status only
/// from 100 to 599 and derives `error.type` from it, so a recorder can turn
/// every field into a label value as it is:
///
/// | attribute | values |
/// |---|---|
/// | `http.request.method` | the 9 known methods, `_OTHER` |
/// | `http.route` | the route template given, or absent |
/// | `http.response.status_code` | 100..=599, or absent when no response was sent |
/// | `url.scheme` | `http`, `https` |
/// | `error.type` | the status for 500..=599, `_OTHER` without a status, else absent |
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
/// let r = HttpServerRequest::new(
///     HttpMethod::Post, Some("/verify"), UrlScheme::Http, Some(503), Duration::from_millis(20),
/// );
/// assert_eq!((r.status_code(), r.status_code_str(), r.error_type()), (Some(503), Some("503"), Some("503")));
/// assert_eq!(r.duration_s(), 0.02);
/// let dropped = HttpServerRequest::new(HttpMethod::Get, None, UrlScheme::Http, None, Duration::ZERO);
/// assert_eq!(dropped.error_type(), Some("_OTHER"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HttpServerRequest {
    method: HttpMethod,
    route: Option<&'static str>,
    scheme: UrlScheme,
    status_code: Option<u16>,
    error_type: Option<&'static str>,
    duration_s: f64,
}

impl HttpServerRequest {
    /// A finished request. `route` must be a template (`/tasks/{id}`), never
    /// a raw path; [`crate::RouteTable`] yields only templates. `status` is
    /// `None` when no response was sent; a status outside 100..=599 is
    /// recorded as none, with `error.type` `_OTHER`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// let r = HttpServerRequest::new(HttpMethod::Get, None, UrlScheme::Https, Some(404), Duration::from_micros(250));
    /// assert_eq!((r.route(), r.error_type()), (None, None)); // a 4xx is the client's error, not the server's
    /// let odd = HttpServerRequest::new(HttpMethod::Get, None, UrlScheme::Http, Some(999), Duration::ZERO);
    /// assert_eq!((odd.status_code(), odd.error_type()), (None, Some("_OTHER")));
    /// ```
    pub fn new(
        method: HttpMethod,
        route: Option<&'static str>,
        scheme: UrlScheme,
        status: Option<u16>,
        duration: Duration,
    ) -> Self {
        let status_code = status.filter(|s| (MIN_STATUS..=MAX_STATUS).contains(s));
        let error_type = match status_code {
            None => Some(ERROR_TYPE_OTHER),
            Some(code) if code >= 500 => status_code_str(code),
            Some(_) => None,
        };
        Self {
            method,
            route,
            scheme,
            status_code,
            error_type,
            duration_s: duration.as_secs_f64(),
        }
    }

    /// `http.request.method`.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, None, UrlScheme::Http, Some(200), Default::default());
    /// assert_eq!(r.method(), HttpMethod::Put);
    /// ```
    pub fn method(&self) -> HttpMethod {
        self.method
    }

    /// `http.route`: the matched template, or `None` when no route matched.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, Some("/tasks/{id}"), UrlScheme::Http, Some(200), Default::default());
    /// assert_eq!(r.route(), Some("/tasks/{id}"));
    /// ```
    pub fn route(&self) -> Option<&'static str> {
        self.route
    }

    /// `url.scheme`.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, None, UrlScheme::Https, Some(200), Default::default());
    /// assert_eq!(r.scheme(), UrlScheme::Https);
    /// ```
    pub fn scheme(&self) -> UrlScheme {
        self.scheme
    }

    /// `http.response.status_code`: 100..=599, or `None` when no response was sent.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, None, UrlScheme::Http, Some(201), Default::default());
    /// assert_eq!(r.status_code(), Some(201));
    /// ```
    pub fn status_code(&self) -> Option<u16> {
        self.status_code
    }

    /// [`HttpServerRequest::status_code`] as a label value, without allocating.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, None, UrlScheme::Http, Some(201), Default::default());
    /// assert_eq!(r.status_code_str(), Some("201"));
    /// ```
    pub fn status_code_str(&self) -> Option<&'static str> {
        self.status_code.and_then(status_code_str)
    }

    /// `error.type`: the status code for a 5xx, `_OTHER` when no status was
    /// sent, `None` when the request did not fail.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, None, UrlScheme::Http, Some(500), Default::default());
    /// assert_eq!(r.error_type(), Some("500"));
    /// ```
    pub fn error_type(&self) -> Option<&'static str> {
        self.error_type
    }

    /// The request's duration in seconds (the unit of the instrument):
    /// finite and non-negative by construction.
    ///
    /// ```
    /// # use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// # let r = HttpServerRequest::new(HttpMethod::Put, None, UrlScheme::Http, Some(200), std::time::Duration::from_millis(1500));
    /// assert_eq!(r.duration_s(), 1.5);
    /// ```
    pub fn duration_s(&self) -> f64 {
        self.duration_s
    }
}
