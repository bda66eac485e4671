//! What the builder reads and checks before anything runs.
//!
//! | file | what it holds |
//! |---|---|
//! | `exporter_env.rs` | every `OTEL_*` variable the builder reads, and its parsing |
//! | `exporter_choice.rs` | OTLP, console or none |
//! | `protocol.rs` | the OTLP protocol and the transport built for it |
//! | `collector_url.rs` | the collector's URL, checked, with the signal path |
//! | `temporality.rs` | cumulative, delta or lowmemory |
//! | `histogram_aggregation.rs` | explicit buckets or base-2 exponential histograms |
//! | `gym_settings.rs` | NeMo Gym's exporter and protocol over the OpenTelemetry variables |
//! | `resource.rs` | the SDK resource of this process |

pub(crate) mod collector_url;
pub(crate) mod exporter_choice;
pub(crate) mod exporter_env;
pub(crate) mod gym_settings;
pub(crate) mod histogram_aggregation;
pub(crate) mod protocol;
pub(crate) mod resource;
pub(crate) mod temporality;
