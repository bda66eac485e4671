//! The recorder contract: what a backend implements and what every
//! implementer must agree on, and a call site never names.
//!
//! A call site records through the crate root (the free functions, the
//! timers, the HTTP request types and layer) and installs with
//! [`crate::install()`]. A backend implements [`Recorder`] and builds its
//! instruments from the catalogue ([`Instrument`] and its constants), with
//! validated [`Boundaries`], honouring the [`SpanGroups`] it was given; it
//! refuses to start in a build with the `off` feature
//! ([`check_recording_compiled_in`]) and says [`ALREADY_INSTALLED`] when the
//! facade is taken. The machinery backends share beyond this contract
//! (environment readers, per-thread shards, the verify tally, naming rules,
//! the `metrics` bridge) is the `gym-metrics-kit` crate.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Mutex;
//! use gym_metrics_api::backend::{Boundaries, Instrument, Recorder};
//! use gym_metrics_api::Role;
//!
//! // A backend holding one rollout histogram (bucket counts) and two verify counters.
//! struct Tiny {
//!     role: Role,
//!     bounds: Boundaries,
//!     rollout_buckets: Mutex<Vec<u64>>,
//!     verified: [AtomicU64; 2],
//! }
//! impl Recorder for Tiny {
//!     fn role(&self) -> &Role { &self.role }
//!     fn record_rollout_duration_ms(&self, ms: f64) {
//!         self.rollout_buckets.lock().unwrap()[self.bounds.bucket_index(ms)] += 1;
//!     }
//!     fn record_verify_ms(&self, _ms: f64, ok: bool) {
//!         self.verified[usize::from(ok)].fetch_add(1, Ordering::Relaxed);
//!     }
//!     fn record_active_servers(&self, _count: u64) {}
//! }
//! let bounds = Boundaries::default_duration_ms();
//! let tiny = Tiny {
//!     role: Role::server("math-0", "resources"),
//!     rollout_buckets: Mutex::new(vec![0; bounds.as_slice().len() + 1]),
//!     bounds,
//!     verified: Default::default(),
//! };
//! tiny.record_rollout_duration(std::time::Duration::from_secs(2)); // 2000 ms: the 2500 ms bucket
//! tiny.record_verify_ms(40.0, true);
//! tiny.record_verify_ms(41.0, false);
//!
//! let le_2500 = Instrument::DEFAULT_DURATION_BOUNDARIES_MS.iter().position(|&b| b == 2_500.0).unwrap();
//! assert_eq!(tiny.rollout_buckets.lock().unwrap()[le_2500], 1);
//! assert_eq!(tiny.verified[1].load(Ordering::Relaxed), 1);
//! ```

pub use crate::boundaries::{Boundaries, BoundariesError};
pub use crate::catalogue::{Instrument, InstrumentKind};
pub use crate::compiled_off::{check_recording_compiled_in, CompiledOffError};
pub use crate::exemplar::Exemplar;
pub use crate::install::ALREADY_INSTALLED;
pub use crate::recorder::{NoopRecorder, Recorder};
pub use crate::span_groups::SpanGroups;
pub use crate::units::{duration_nanos, short_duration_nanos};
