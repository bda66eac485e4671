#![doc = include_str!("../README.md")]
//!
//! ## The crate
//!
//! The crate root is what a call site sees: the free functions, the timers,
//! [`Role`], [`install()`] and what it returns, the HTTP request types (and
//! layer) and the [`FleetTarget`] an orchestrator publishes. The recorder
//! contract is in [`backend`]: the [`backend::Recorder`] trait, the
//! instrument catalogue, boundaries and span groups. What backends share
//! beyond the contract is the `gym-metrics-kit` crate, as `metrics-util` is
//! for `metrics` exporters.
//!
//! A recording backend built into a program with the `off` feature refuses
//! to start ([`backend::CompiledOffError`]).
//! `gym.server.request_duration_ms` is deliberately never exported (see
//! [`backend::Instrument::SERVER_REQUEST_DURATION`]).
//!
//! ## The contract
//!
//! Both histograms use the boundaries 100, 250, 500, 1000, 2500, 5000,
//! 10000, 30000, 60000, 120000, 300000, 600000, 1200000, 1800000 and
//! 3600000 ms ([`backend::Boundaries`]; a builder may override them). No
//! gym instrument carries attributes. Recording never panics, never blocks
//! on export and never returns an error a caller must handle. The one
//! exception is [`record_active_servers`] from a non-orchestrator: it is
//! refused with an error naming the role, and records nothing. Better, only
//! an orchestrator install yields the [`FleetSize`] capability, so server
//! code cannot even express the call.
//!
//! ```
//! use std::time::Duration;
//! use gym_metrics_api::{record_verify, RolloutTimer, VerifyTimer};
//!
//! let _rollout = RolloutTimer::start(); // records on drop, failed or not
//! let mut verify = VerifyTimer::start(); // records a failure unless marked
//! verify.succeeded();
//! record_verify(Duration::from_millis(40), true); // or record directly
//! ```
//!
//! ## HTTP request metrics
//!
//! Rust servers have no auto-instrumentation. So the `tower` feature (off by
//! default) provides `HttpServerMetricsLayer`, recording OpenTelemetry's
//! stable `http.server.request.duration` through the installed backend. It
//! pulls only `http`, `tower-service`, `tower-layer` and `pin-project-lite`.
//! The unit is seconds, with the boundaries 0.005, 0.01, 0.025, 0.05, 0.075,
//! 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5 and 10. The layer works with tower
//! and axum, and with a plain hyper 1 server through hyper-util's
//! `TowerToHyperService`; the gym-fleet resources servers do this.
//! [`HttpServerRequestTimer`] times a request in any handler.
//!
//! On a Prometheus scrape it is
//! `http_server_request_duration_seconds_{bucket,sum,count}`, exactly as
//! OpenTelemetry's exporter renders it. Its labels are `http_request_method`,
//! `http_route`, `http_response_status_code`, `url_scheme` and `error_type`
//! (plus `otel_scope_name`/`otel_scope_version`). Cardinality is bounded by
//! construction (see [`HttpServerRequest`]):
//!
//! - the method is one of the 9 HTTP methods or `_OTHER`;
//! - the route is a template from the table given at construction, absent
//!   when none matched (never the raw path, never the query);
//! - the status is 100..=599, absent when no response was sent;
//! - the scheme is `http` or `https`;
//! - `error.type` is the 5xx status or `_OTHER` (no status), so it adds no series.
//!
//! That is at most 10 × (routes + 1) × (statuses seen + 1) × 2 series.
//! Nothing installed costs one atomic load and a branch per request; the
//! no-op backend costs nothing at all.
//!
//! The `trace-context` feature (off by default; it turns `tower` on) makes
//! the layer run each request in the caller's W3C trace context, read from
//! `traceparent` and `tracestate`. A timer started in the handler then takes
//! the caller's trace as its exemplar. It pulls the `opentelemetry` API
//! crate only.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod backend;
mod bad_input;
mod boundaries;
mod catalogue;
mod cell;
mod compiled_off;
mod exemplar;
mod facade;
mod file_sd;
mod fleet_target;
mod http_server;
mod install;
mod recorder;
mod role;
mod sd_json;
mod span_groups;
mod timer;
mod units;

pub use bad_input::dropped_values;
pub use facade::{
    enabled, group_enabled, record_active_servers, record_http_server_request,
    record_rollout_duration, record_rollout_duration_ms, record_verify, record_verify_ms,
};
pub use file_sd::FileSdError;
pub use fleet_target::{FleetTarget, FleetTargetError};
pub use http_server::{
    HttpMethod, HttpServerRequest, HttpServerRequestTimer, RouteTable, RouteTableError, UrlScheme,
};
#[cfg(feature = "tower")]
pub use http_server::{HttpServerMetrics, HttpServerMetricsFuture, HttpServerMetricsLayer};
pub use install::{install, role, FleetSize, Installation, SetRecorderError};
pub use role::{Role, RoleError};
pub use span_groups::Group;
pub use timer::{RolloutTimer, VerifyTimer};
