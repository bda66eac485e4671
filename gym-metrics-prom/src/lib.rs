#![doc = include_str!("../README.md")]
//!
//! ## Two exits
//!
//! As `metrics-exporter-prometheus` offers: [`PrometheusBuilder::install`]
//! installs into the facade and serves `/metrics` from a thread of its own.
//! [`PrometheusBuilder::build`] installs nothing and hands back a
//! [`PrometheusHandle`] to serve from your own server.
//!
//! ```
//! use gym_metrics_api::backend::Recorder;
//! use gym_metrics_api::Role;
//! use gym_metrics_prom::PrometheusBuilder;
//!
//! let (recorder, handle) = PrometheusBuilder::new().role(Role::orchestrator()).build()?;
//! recorder.record_rollout_duration_ms(3400.0);
//! recorder.record_verify_ms(250.0, true);
//! recorder.record_active_servers(4);
//! let text = handle.render();
//! assert!(text.contains("gym_rollout_duration_ms_milliseconds_sum{otel_scope_name=\"gym-metrics\""));
//! assert!(text.contains("gym_servers_active{otel_scope_name=\"gym-metrics\""));
//! # Ok::<(), gym_metrics_prom::BuildError>(())
//! ```
//!
//! ## The hot path
//!
//! Each recording thread owns a shard (`thread_local::ThreadLocal`) of
//! 128-byte-aligned `AtomicU64` slots: the sum in whole nanoseconds, one
//! count per bucket and, for verifications, a success count, held inline,
//! and one count per native bucket, on the heap beside them. The facade
//! hands the backend the measured `Duration`. A record is a thread-id
//! lookup, the native bucket (the value's exponent and a table of its
//! mantissa's top bits, no loop, no data-dependent branch), the classic
//! bucket from it, and three relaxed load/store pairs (four for a
//! successful verification). There is no read-modify-write, no lock, and no
//! cache line shared with another writer. A timer started in a traced span
//! (feature `exemplars`) also offers its bucket an exemplar, with a
//! `try_lock` that skips it rather than wait. Sums are exact (0.1 ms + 0.2 ms is 0.3 ms) and carry into a float
//! past 584 years of summed time instead of wrapping. A scrape sums the
//! shards; `_count` is derived from the buckets, so it always
//! equals the `+Inf` bucket, and `gym_verify_completed_total` is that same
//! count, so the counters, the rate (computed at scrape time) and the verify
//! histogram always agree. Shards of exited threads keep their counts and are
//! reused by new threads, so memory is bounded by the peak number of live
//! threads.
//!
//! Why not the `prometheus` crate's own histogram: each observe is three
//! atomic read-modify-writes on lines every recording thread shares (a
//! count, a bucket, and a compare-and-swap loop for the sum), which collapses
//! under contention. `BENCHMARKS.md` (`cargo xtask bench`) measures ours
//! beside it and the other peers, with one and two threads.
//!
//! ## Exposition
//!
//! Families appear when the OpenTelemetry backend's instruments would show
//! them. The histograms appear from their first record, and
//! `gym_servers_active` from the orchestrator's first write (never for a
//! server). The two verify counters are there from the start (0 until the
//! first verification: `rate()` works from the first increment). The success
//! rate appears from the first verification (never NaN).
//! `target_info` is always there. `tests/installs_nothing/exposition_matches_opentelemetry.rs`
//! proves the text is byte for byte what `opentelemetry-prometheus` 0.33
//! renders for the same recordings.
//!
//! One model of the families (names, HELP, TYPE, labels, and when each
//! appears), built with the recorder, drives both ways out. The handle writes
//! the text straight from the shard sums. Every constant part (HELP and TYPE
//! lines, label sets, `target_info`) is rendered once at build time.
//! Building `prometheus` crate families and encoding them with its
//! `TextEncoder` costs about three times `prometheus-client`'s whole
//! encoder, the direct writer about a quarter. With the feature
//! `prometheus-collector` (off by default), `PrometheusHandle::collector`
//! hands the same families to a `prometheus::Registry`, for an application
//! that already serves one; the same test holds `TextEncoder` over it byte
//! for byte equal to [`PrometheusHandle::render`].
//!
//! ## Formats
//!
//! `/metrics` answers in the format of the scraper's `Accept` range with
//! the highest quality, gzipped when `Accept-Encoding` allows it: the 0.0.4
//! text (the default), OpenMetrics 1.0 text, or protobuf (length-delimited
//! `io.prometheus.client.MetricFamily`, [`PrometheusHandle::render_protobuf`]).
//! Prometheus 2.x asks for protobuf first when it runs with
//! `--enable-feature=native-histograms`, or when a job lists
//! `scrape_protocols: [PrometheusProto]`. All three carry the same families,
//! names, labels and values. In protobuf every histogram family also
//! carries a native histogram of the same observations (exponential
//! buckets, [`PrometheusBuilder::native_histogram_schema`]), except an
//! application registry's: the `prometheus` crate keeps classic buckets
//! only. A Prometheus with native histograms on stores the native one; with
//! `scrape_classic_histograms: true` it stores the classic buckets too.
//! Prometheus takes a native histogram only if its count is its buckets'
//! total, so in protobuf the count is that total: a record a scrape catches
//! half-written is counted by the next scrape. One difference is Prometheus' own: from
//! protobuf it stores a bucket bound as a float (`le="100.0"`), from the
//! 0.0.4 text as written (`le="100"`). Prometheus 3 stores the float
//! spelling from every format. So a `sum by (le)` over processes scraped in
//! different formats by a Prometheus 2 splits their buckets.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod builder;
mod endpoint;
mod endpoint_env;
mod error;
mod exposition;
mod guard;
mod handle;
mod listen_address;
#[cfg(feature = "metrics-bridge")]
mod metrics_bridge;
mod resource;
mod scope;

pub use builder::PrometheusBuilder;
#[cfg(feature = "web-config")]
pub use endpoint::web_security::web_config::{WebConfig, WebConfigError};
pub use endpoint::EndpointStats;
pub use error::{BuildError, ConfigError, ShutdownError};
#[cfg(feature = "prometheus-collector")]
pub use exposition::collector::GymCollector;
pub use guard::PrometheusGuard;
/// The options of the `metrics` bridge (histogram buckets by name, cardinality
/// limit), given to the builder's `with_metrics_bridge`.
#[cfg(feature = "metrics-bridge")]
pub use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
/// Which timed records take their span as an exemplar
/// (`OTEL_METRICS_EXEMPLAR_FILTER`), as on the otel backend.
pub use gym_metrics_kit::env::ExemplarFilter;
/// The Prometheus backend's recorder: the kit's one recorder of the gym
/// instruments, into per-thread shards summed at scrape time. Obtained
/// from [`PrometheusBuilder::build`] (or installed by
/// [`PrometheusBuilder::install`]).
pub use gym_metrics_kit::recording::GymRecorder as PrometheusRecorder;
pub use gym_metrics_kit::recording::NativeHistogramError;
pub use handle::{
    PrometheusHandle, OPENMETRICS_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE, TEXT_CONTENT_TYPE,
};
#[cfg(feature = "metrics-bridge")]
pub use metrics_bridge::{MetricsBridgeRecorder, MetricsBridgeStats};
pub use scope::{SCOPE_NAME, SCOPE_VERSION};

/// The environment variable naming the web configuration file
/// ([`PrometheusBuilder::from_env`] reads it): for a launcher that hands it
/// to the processes it starts.
pub const WEB_CONFIG_FILE_VAR: &str = endpoint_env::WEB_CONFIG_FILE_VAR;
