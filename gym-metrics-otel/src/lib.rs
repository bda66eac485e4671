#![doc = include_str!("../README.md")]
//!
//! ## Behaviour
//!
//! - Configuration follows the standard `OTEL_*` variables (see
//!   [`OtelBuilder::from_env_lookup`]); every builder setting overrides one.
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
//! ## Transports
//!
//! | feature | builds in | pulls |
//! |---|---|---|
//! | `grpc` | OTLP/gRPC (`grpc`) | tonic, on a Tokio runtime thread of the backend's own |
//! | `http-proto` | OTLP/HTTP, protobuf bodies (`http/protobuf`) | reqwest's blocking client |
//! | `http-json` | OTLP/HTTP, JSON bodies (`http/json`) | the same client |
//! | `tls` | `https://` endpoints and mTLS, for the transports that are on | rustls (ring), the platform's trust store |
//!
//! All four are on by default. NeMo Gym's servers export over gRPC unless a
//! config selects http/protobuf, so a fleet's binary needs both. A smaller
//! build names what it uses: `default-features = false` with
//! `features = ["http-proto", "tls"]` pulls no tonic, and `["grpc", "tls"]`
//! no reqwest.
//!
//! A protocol whose feature is off, selected by
//! `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL` or [`OtelBuilder::protocol`], is a
//! start-up error: [`BuildError::TransportNotBuilt`] names the variable, its
//! value and the feature. Nothing falls back in silence. With no protocol
//! set, a default that is not built gives way to the first built one of
//! http/protobuf, gRPC and http/json, with a log line. The console exporter
//! and exporter `none` need no transport.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]
//!
//! ## Layout
//!
//! | module | what it holds |
//! |---|---|
//! | `builder`, `guard`, `error` | the builder, the guard `install` returns, the errors |
//! | `settings` | what the builder reads and checks: the environment, the protocol, the collector URL, temporality, aggregation, NeMo Gym's choices, the resource |
//! | `export` | the export pipeline: the periodic reader's one exporter, the gym instruments encoded as OTLP, the transports and their TLS, the export log |
//! | `instruments` | the SDK instruments of ours: the verify counters and rate, process and memory gauges, the `metrics` bridge |

mod builder;
mod error;
mod export;
mod guard;
mod instruments;
mod meter_provider;
mod settings;

pub use builder::OtelBuilder;
pub use error::{BuildError, ConfigError, FlushError, ShutdownError};
pub use guard::OtelGuard;
/// The options of the `metrics` bridge (histogram buckets by name, cardinality
/// limit), given to the builder's `with_metrics_bridge`.
#[cfg(feature = "metrics-bridge")]
pub use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
/// Which timed records take their span as an exemplar
/// (`OTEL_METRICS_EXEMPLAR_FILTER`).
pub use gym_metrics_kit::env::ExemplarFilter;
/// The OpenTelemetry backend's recorder: the kit's one recorder of the gym
/// instruments, into the recording core that every export encodes as OTLP
/// (the same per-thread shards, native buckets and exemplars as the
/// Prometheus backend's). Obtained from [`OtelBuilder::build`] (or
/// installed by [`OtelBuilder::install`]).
pub use gym_metrics_kit::recording::GymRecorder as OtelRecorder;
pub use gym_metrics_kit::{SCOPE_NAME, SCOPE_VERSION};
#[cfg(feature = "metrics-bridge")]
pub use instruments::metrics_bridge::{MetricsBridgeRecorder, MetricsBridgeStats};
pub use settings::exporter_choice::MetricsExporter;
pub use settings::exporter_env::ENV_VARIABLES;
pub use settings::histogram_aggregation::HistogramAggregation;
pub use settings::protocol::OtlpProtocol;
pub use settings::temporality::TemporalityPreference;
