//! The API crate's integration tests, linked once as one binary.
//!
//! A test that installs process-wide state (the facade's recorder, a logger,
//! the `metrics` recorder, environment variables) starts with
//! `gym_testkit::ran_in_child()`: nextest (`cargo xtask ci`) gives every test a
//! process of its own, and under plain `cargo test` such a test runs again,
//! alone, in a child process.

mod bad_f64_inputs;
mod common;
mod concurrent_install;
mod facade_threads;
mod http_layer;
mod installed_twice;
mod nothing_installed;
mod orchestrator_role;
mod server_cannot_publish_targets;
mod server_role_refused;
mod span_group_gate;
mod traceparent_attack;
