//! For implementers of a backend: what a recorder needs and a call site
//! never names.
//!
//! A call site records through the crate root (the free functions, the
//! timers, the HTTP request types and layer) and installs with
//! [`crate::install()`]. A backend implements [`Recorder`] and builds its
//! instruments from the rest of this module: the instrument [`catalogue`],
//! validated [`Boundaries`], the [`VerifyTally`] behind the success rate, the
//! [`resource`] helpers and the role's attribute names, the Prometheus
//! naming rules ([`prometheus_name`] and its parts), the HTTP status
//! strings, the start-up check against the `off` feature, and the duration
//! conversions the trait's defaults use.
//!
//! ```
//! use std::sync::Mutex;
//! use gym_metrics_api::backend::{catalogue, Boundaries, Recorder, VerifyTally};
//! use gym_metrics_api::Role;
//!
//! // A backend holding one rollout histogram (bucket counts) and the tally.
//! struct Tiny {
//!     role: Role,
//!     bounds: Boundaries,
//!     rollout_buckets: Mutex<Vec<u64>>,
//!     tally: VerifyTally,
//! }
//! impl Recorder for Tiny {
//!     fn role(&self) -> &Role { &self.role }
//!     fn record_rollout_duration_ms(&self, ms: f64) {
//!         self.rollout_buckets.lock().unwrap()[self.bounds.bucket_index(ms)] += 1;
//!     }
//!     fn record_verify_ms(&self, _ms: f64, ok: bool) { self.tally.record(ok) }
//!     fn record_active_servers(&self, _count: u64) {}
//! }
//! let bounds = Boundaries::default_duration_ms();
//! let tiny = Tiny {
//!     role: Role::server("math-0", "resources"),
//!     rollout_buckets: Mutex::new(vec![0; bounds.as_slice().len() + 1]),
//!     bounds,
//!     tally: VerifyTally::new(),
//! };
//! tiny.record_rollout_duration(std::time::Duration::from_secs(2)); // 2000 ms: the 2500 ms bucket
//! tiny.record_verify_ms(40.0, true);
//! tiny.record_verify_ms(41.0, false);
//!
//! let le_2500 = catalogue::DEFAULT_DURATION_BOUNDARIES_MS.iter().position(|&b| b == 2_500.0).unwrap();
//! assert_eq!(tiny.rollout_buckets.lock().unwrap()[le_2500], 1);
//! assert_eq!(tiny.tally.snapshot().success_rate(), Some(0.5));
//! ```

pub use crate::backend_consts::{
    default_server_role, ALREADY_INSTALLED, DEFAULT_SERVER_NAME, DEFAULT_SERVER_TYPE,
    MAX_DURATION_MS, SCOPE_NAME, SCOPE_VERSION,
};
pub use crate::boundaries::{Boundaries, BoundariesError};
pub use crate::compiled_off::{check_recording_compiled_in, CompiledOffError};
pub use crate::config_error::ConfigError;
pub use crate::env_vars::EnvVars;
pub use crate::gym_env::{GymEnv, GymExporter, RUN_ID_ATTRIBUTE, SERVICE_GROUP_ATTRIBUTE};
pub use crate::http_sd::{render_sd_json, HTTP_SD_CONTENT_TYPE};
pub use crate::http_server::{status_code_str, ERROR_TYPE_OTHER};
pub use crate::per_thread::PerThread;
pub use crate::prometheus_naming::{
    prometheus_name, sample_names, sanitize_label_name, sanitize_metric_name, unit_suffix,
    TARGET_INFO_FAMILY,
};
pub use crate::recorder::{NoopRecorder, Recorder};
pub use crate::redact::{
    redact_header_list, redact_userinfo, redact_value, RedactedHeaders, REDACTED,
};
pub use crate::role::{
    DEFAULT_SERVICE_NAME, ROLE_ATTRIBUTE, SERVER_NAME_ATTRIBUTE, SERVER_TYPE_ATTRIBUTE,
};
pub use crate::span_groups::SpanGroups;
pub use crate::tally::{VerifyCounts, VerifyTally};
pub use crate::units::{duration_ms, duration_nanos, short_duration_nanos};

pub mod catalogue {
    //! The instrument catalogue: the one source of truth for names, kinds,
    //! units, descriptions and default boundaries that every backend reads.
    //!
    //! ```
    //! use gym_metrics_api::backend::catalogue::{self, InstrumentKind};
    //! // A backend creates one instrument per entry, of the entry's kind.
    //! let histograms: Vec<&str> = catalogue::EXPORTED
    //!     .iter()
    //!     .filter(|i| i.kind == InstrumentKind::Histogram)
    //!     .map(|i| i.name)
    //!     .collect();
    //! assert_eq!(histograms, ["gym.rollout.duration_ms", "gym.verify.duration_ms"]);
    //! ```
    pub use crate::catalogue::*;
}

pub mod resource {
    //! Backend-neutral pieces of a process's OpenTelemetry resource: the
    //! per-process `service.instance.id` and the `key=value` lists of
    //! `OTEL_RESOURCE_ATTRIBUTES` (and `OTEL_EXPORTER_OTLP_HEADERS`).
    //!
    //! ```
    //! use gym_metrics_api::backend::resource::{new_instance_id, parse_key_value_list};
    //! let mut attributes = parse_key_value_list("team=rl").unwrap();
    //! attributes.push(("service.instance.id".into(), new_instance_id()));
    //! assert_eq!(attributes[0], ("team".into(), "rl".into()));
    //! assert_eq!(attributes[1].1.len(), 36);
    //! ```
    pub use crate::resource::*;
}
