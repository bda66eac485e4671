//! The environment readers: every variable a backend reads, read once at
//! start-up, a bad value an error naming the variable and the value.
//!
//! [`EnvVars`] reads a backend's own variables (the OpenTelemetry ones, and
//! `GYM_METRICS_*`); [`GymEnv`] is what a NeMo Gym orchestrator hands its
//! servers (`NEMO_GYM_OTEL_*`, falling back to `NEMO_LENS_*`).

mod gym;
mod vars;

pub use gym::{GymEnv, GymExporter, RUN_ID_ATTRIBUTE, SERVICE_GROUP_ATTRIBUTE};
pub use vars::EnvVars;
