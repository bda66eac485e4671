//! # gym-metrics-api
//!
//! The trait-only facade of gym-metrics: the five numbers a reinforcement-learning
//! gym fleet needs, recorded from every process at no cost on the hot path.
//!
//! | instrument | kind | unit |
//! |---|---|---|
//! | `gym.rollout.duration_ms` | histogram | ms |
//! | `gym.verify.duration_ms` | histogram | ms |
//! | `gym.verify.success_rate` | gauge | none |
//! | `gym.servers.active` | gauge (orchestrator only) | none |
//! | `gym.verify.completed`, `gym.verify.succeeded` | counters | none |
//! | `http.server.request.duration` | histogram, by route, method, status | s |
//!
//! The HTTP server metric is recorded by [`HttpServerRequestTimer`] or, with
//! the `tower` feature, by `HttpServerMetricsLayer` (tower/axum, and hyper 1
//! through hyper-util's `TowerToHyperService`); every label value comes from a
//! bounded set (see [`HttpServerRequest`]).
//!
//! `gym.server.request_duration_ms` is deliberately never exported (see
//! [`backend::Instrument::SERVER_REQUEST_DURATION`]).
//!
//! Libraries call the free functions; an application installs one backend
//! (`gym-metrics-prom`, `gym-metrics-otel`, or `gym-metrics-noop`). Until
//! something is installed, each call is one atomic load and a branch. An
//! application (never a library: Cargo unifies features) may turn on this
//! crate's `off` feature beside the no-op backend to compile every call to
//! nothing; a recording backend built into such a program refuses to start
//! ([`backend::CompiledOffError`]).
//!
//! The crate root is what a call site sees: the free functions, the timers,
//! [`Role`], [`install()`] and what it returns, the HTTP request types (and
//! layer) and the [`FleetTarget`] an orchestrator publishes. The recorder
//! contract (the [`backend::Recorder`] trait, the instrument catalogue,
//! boundaries, span groups) is in [`backend`]. What backends share beyond
//! the contract (environment readers, per-thread shards, the verify tally,
//! naming rules, the `metrics` bridge, process metrics) is the
//! `gym-metrics-kit` crate, as `metrics-util` is for `metrics` exporters.
//!
//! ```
//! use std::time::Duration;
//! use gym_metrics_api::backend::NoopRecorder;
//! use gym_metrics_api::{install, record_verify, Role};
//!
//! // In a server process, once at start-up:
//! let installation = install(NoopRecorder::new(Role::server("math-0", "resources"))).unwrap();
//! assert!(installation.fleet_size().is_none());
//! // On the hot path:
//! record_verify(Duration::from_millis(40), true);
//! assert!(gym_metrics_api::record_active_servers(3).is_err()); // refused: not the orchestrator
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod backend;
mod bad_input;
mod boundaries;
mod catalogue;
mod cell;
mod compiled_off;
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
