//! The Prometheus backend's tests that install nothing process-wide (no
//! global recorder, endpoint, environment or child process), linked once as
//! one test binary. A scenario that needs process-wide state keeps a binary
//! of its own beside this one.

#[path = "../common/mod.rs"]
mod common;

mod exposition_matches_opentelemetry;
mod promtool_check;
mod resource_attributes_promtool;
