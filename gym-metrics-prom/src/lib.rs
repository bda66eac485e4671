//! # gym-metrics-prom
//!
//! The Prometheus backend of gym-metrics: a recorder whose hot path touches
//! only thread-owned memory, and a `/metrics` endpoint on hyper 1 whose
//! exposition carries exactly the series OpenTelemetry's Prometheus exporter
//! renders for the same recordings (names, HELP, TYPE, `otel_scope_*` labels,
//! `le` values and `target_info`), so one dashboard serves both paths.
//!
//! Two exits, as `metrics-exporter-prometheus` offers:
//! [`PrometheusBuilder::install`] installs into the facade and serves
//! `/metrics` from a thread of its own; [`PrometheusBuilder::build`] installs
//! nothing and hands back a [`PrometheusHandle`] to serve from your own server.
//!
//! ```
//! use gym_metrics_api::{Recorder, Role};
//! use gym_metrics_prom::PrometheusBuilder;
//!
//! let (recorder, handle) = PrometheusBuilder::new().role(Role::orchestrator()).build()?;
//! recorder.record_rollout_duration(3400.0);
//! recorder.record_verify(250.0, true);
//! recorder.record_active_servers(4);
//! let text = handle.render();
//! assert!(text.contains("gym_rollout_duration_ms_milliseconds_sum{otel_scope_name=\"gym-metrics\""));
//! assert!(text.contains("gym_servers_active{otel_scope_name=\"gym-metrics\""));
//! # Ok::<(), gym_metrics_prom::BuildError>(())
//! ```
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod builder;
mod collector;
mod endpoint;
mod env_config;
mod error;
mod fleet_gauge;
mod guard;
mod gym_metrics;
mod handle;
mod instance_id;
mod listen_address;
mod naming;
mod openmetrics;
mod recorder;
mod resource;
mod scope;
mod sharded_histogram;

pub use builder::PrometheusBuilder;
pub use error::{BuildError, ConfigError};
pub use guard::PrometheusGuard;
pub use handle::{PrometheusHandle, OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};
pub use naming::{prometheus_name, sanitize_label_name};
pub use recorder::PrometheusRecorder;
pub use scope::{SCOPE_NAME, SCOPE_VERSION};
pub use sharded_histogram::{HistogramSnapshot, ShardedHistogram};
