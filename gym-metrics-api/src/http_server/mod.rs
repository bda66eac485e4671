//! `http.server.request.duration`: OpenTelemetry's stable HTTP server
//! metric, dimensioned by method, route template, status and scheme.
//!
//! Every label value comes from a fixed set, so the number of series is
//! bounded by construction:
//!
//! `|methods| (10) x |routes + absent| x |statuses seen (100..=599) + absent| x |schemes| (2)`
//!
//! `error.type` adds nothing: it is a function of the status (the status for
//! 500..=599, `_OTHER` without one). Raw paths, query strings, unknown
//! method spellings and status codes outside 100..=599 can never become
//! label values. A server with the route table `["/verify"]` answering
//! 200, 400, 404, 405 and 500 over plain HTTP has at most
//! `10 x 2 x 6 x 1 = 120` series, and in practice a handful.

mod method;
mod request;
mod route_table;
mod scheme;
mod status;
mod timer;
#[cfg(feature = "tower")]
mod tower_layer;
#[cfg(feature = "tower")]
mod trace_context;

pub use method::HttpMethod;
pub use request::HttpServerRequest;
pub use route_table::{RouteTable, RouteTableError};
pub use scheme::UrlScheme;
pub use timer::HttpServerRequestTimer;
#[cfg(feature = "tower")]
pub use tower_layer::{HttpServerMetrics, HttpServerMetricsFuture, HttpServerMetricsLayer};
