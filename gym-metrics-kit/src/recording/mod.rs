//! The one recording core of both backends (feature `recording`): what one
//! process records, written on the hot path by a backend's recorder and
//! read at each scrape or collection. Per-thread shards of classic and
//! native histogram counts with their exemplar slots ([`ShardedHistogram`]),
//! the HTTP server histogram's series ([`HttpServerHistogram`]), the fleet
//! gauge and the published fleet, all held by [`GymMetrics`] and written
//! through one [`GymRecorder`]. With feature `exemplars`, a timer started
//! in an OpenTelemetry span leaves its ids on its bucket. A backend
//! renders what [`ShardedHistogram::snapshot`] reads (the Prometheus
//! exposition) and keeps no second copy of any of it.
//!
//! ```
//! use gym_metrics_api::backend::Boundaries;
//! use gym_metrics_api::Role;
//! use gym_metrics_kit::recording::{GymMetrics, NativeConfig};
//! let metrics = GymMetrics::new(Role::default_server(), Boundaries::default(), NativeConfig::default());
//! metrics.rollout_duration.record_duration(std::time::Duration::from_millis(40));
//! let rollouts = metrics.rollout_duration.snapshot();
//! assert_eq!((rollouts.count(), rollouts.sum), (1, 40.0));
//! ```

mod bucket_search;
#[cfg(feature = "exemplars")]
mod exemplar_context;
mod exemplars;
mod fleet_gauge;
mod fleet_sd;
mod http_histogram;
mod instruments;
mod nanos;
mod native;
mod recorder;
mod sharded_histogram;
mod slot_buckets;

pub use exemplars::ExemplarSample;
pub use fleet_gauge::FleetGauge;
pub use fleet_sd::{FleetSd, SharedFleetSd};
pub use http_histogram::{HttpSeriesKey, HttpServerHistogram, HTTP_SERIES_LIMIT};
pub use instruments::GymMetrics;
pub use native::{
    Layout, NativeConfig, NativeHistogramError, Reading, Side, DEFAULT_BUCKET_LIMIT,
    DEFAULT_SCHEMA, MAX_SCHEMA, MIN_SCHEMA,
};
pub use recorder::GymRecorder;
pub use sharded_histogram::{HistogramSnapshot, ShardedHistogram};
