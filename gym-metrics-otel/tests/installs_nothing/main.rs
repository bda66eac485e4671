//! The OpenTelemetry backend's tests that install nothing process-wide (no
//! global recorder, logger, environment or child process), linked once as one
//! test binary. A scenario that needs process-wide state keeps a binary of
//! its own beside this one.

#[path = "../support/mod.rs"]
mod support;

mod build_errors;
mod console;
mod env_to_wire;
mod fault_restart;
mod inside_app_runtime;
