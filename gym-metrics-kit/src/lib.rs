#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! | module | what it holds |
//! |---|---|
//! | [`env`](mod@env) | the environment readers and the one parser of each kind of value: the OpenTelemetry variables, NeMo Gym's `NEMO_GYM_OTEL_*` ([`env::GymEnv`]), TLS |
//! | [`ConfigError`] | the one configuration error: variable, value (secrets redacted), what was expected |
//! | [`file`](mod@file) | reading a configured file to a size bound |
//! | [`redact`] | keeping credentials out of errors, `Debug` and log lines |
//! | [`resource`] | the per-process instance id and `key=value` lists |
//! | [`PerThread`] | per-thread shards, for the recording core and the `metrics` bridge |
//! | [`naming`] | the Prometheus naming rules both backends' expositions follow |
//! | `bridge` (feature `metrics-bridge`) | the `metrics` crate bridged into a backend: registry, series, cardinality cap, recorder, over a backend's storage |
//! | [`install`] | the one install sequence of every backend's `install` |
//! | [`log_limiter`] | at most one log line per cause per interval, with a count of those held back: the Prometheus endpoint's client-caused lines, the OpenTelemetry backend's export-failure reminders |
//! | [`settings`] | what both backends' builders set alike (role, boundaries, resource, Gym's settings, extra families) |
//! | `recording` (feature `recording`) | the one recording core of both backends: per-thread histogram shards with native buckets and exemplar slots, the HTTP series, the fleet gauge and fleet |
//! | `process` (feature `process`) | this process's CPU, memory, descriptors and threads, from /proc |
//! | `memory` (feature `process`) | NeMo Gym's memory gauges: an orchestrator's servers' process trees and the host, sampled every interval |
//! | `tls` (feature `tls`) | the one PEM loader: certificates and private keys |
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

#[cfg(feature = "metrics-bridge")]
pub mod bridge;
pub mod env;
mod error;
pub mod file;
pub mod install;
pub mod log_limiter;
#[cfg(feature = "process")]
pub mod memory;
pub mod naming;
mod per_thread;
#[cfg(feature = "process")]
pub mod process;
#[cfg(feature = "recording")]
pub mod recording;
pub mod redact;
pub mod resource;
pub mod settings;
#[cfg(feature = "tls")]
pub mod tls;

pub use error::ConfigError;
pub use per_thread::PerThread;

/// The instrumentation scope name of every gym instrument: the OpenTelemetry
/// meter's name, and `otel_scope_name` on every Prometheus series.
///
/// ```
/// // The scope is named after the crates that record into it.
/// assert!(env!("CARGO_PKG_NAME").starts_with(gym_metrics_kit::SCOPE_NAME));
/// ```
pub const SCOPE_NAME: &str = "gym-metrics";

/// The instrumentation scope version (`otel_scope_version`): the workspace
/// version, shared by every gym-metrics crate.
pub const SCOPE_VERSION: &str = env!("CARGO_PKG_VERSION");
