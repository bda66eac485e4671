//! # gym-metrics-otel
//!
//! The OpenTelemetry backend of gym-metrics: the catalogue's instruments on
//! `opentelemetry_sdk` 0.33, exported over OTLP (http/protobuf, http/json or
//! gRPC, over TLS and mTLS with the default `tls` feature), as
//! OTLP/JSON lines on the console, or not at all, configured by the standard
//! `OTEL_*` variables (see [`OtelBuilder::from_env_lookup`]).
//!
//! - Recording never blocks on export: values aggregate in memory and a
//!   reader thread exports them every interval (default 10 s, where the
//!   specification says 60 s: see [`OtelBuilder::export_interval`]).
//! - http/protobuf needs no async runtime in the application; gRPC runs on a
//!   runtime thread of the backend's own.
//! - [`OtelGuard::shutdown`] (and dropping the guard) exports the final values
//!   and returns within a deadline (default 5 s), even against a collector
//!   that accepts connections and never answers.
//! - While the collector is down, failures are logged (rate-limited) through
//!   `log` under the target `gym_metrics_otel`; with cumulative temporality
//!   (the default) the first export after it returns carries the full totals.
//! - With the feature `metrics-bridge`, `OtelBuilder::with_metrics_bridge`
//!   also bridges the `metrics` crate's macros into the same export
//!   (`MetricsBridgeRecorder`); [`OtelGuard::meter_provider`] hands out the
//!   SDK meter provider for instruments made with the OpenTelemetry API.
//!
//! ```no_run
//! use gym_metrics_api::Role;
//! use gym_metrics_otel::OtelBuilder;
//!
//! let guard = OtelBuilder::from_env()?
//!     .role(Role::server("math-verifier-0", "resources"))
//!     .install()?;
//! gym_metrics_api::record_verify(std::time::Duration::from_millis(40), true);
//! guard.shutdown()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod builder;
mod collector_url;
mod console_exporter;
mod console_writer;
mod deadline;
mod error;
mod export_log;
mod exporter_choice;
mod exporter_env;
mod grpc_runtime;
mod guard;
mod gym_settings;
mod histogram_aggregation;
mod http_attributes;
mod http_client;
mod meter_provider;
#[cfg(feature = "metrics-bridge")]
mod metrics_bridge;
mod process_instruments;
mod protocol;
mod recorder;
mod resource;
mod start;
mod temporality;
#[cfg(feature = "tls")]
mod tls;

pub use builder::OtelBuilder;
pub use error::{BuildError, ConfigError, FlushError, ShutdownError};
pub use exporter_choice::MetricsExporter;
pub use exporter_env::ENV_VARIABLES;
pub use guard::OtelGuard;
/// The options of the `metrics` bridge (histogram buckets by name, cardinality
/// limit), given to the builder's `with_metrics_bridge`.
#[cfg(feature = "metrics-bridge")]
pub use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
pub use gym_metrics_kit::{SCOPE_NAME, SCOPE_VERSION};
pub use histogram_aggregation::HistogramAggregation;
#[cfg(feature = "metrics-bridge")]
pub use metrics_bridge::{MetricsBridgeRecorder, MetricsBridgeStats};
pub use protocol::OtlpProtocol;
pub use recorder::OtelRecorder;
pub use temporality::TemporalityPreference;
