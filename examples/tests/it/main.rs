//! The examples' integration tests (the demo fleet, its e2e against real servers), linked once as one binary.
//!
//! A test that installs process-wide state (the facade's recorder, a logger,
//! the `metrics` recorder, environment variables) starts with
//! `gym_testkit::ran_in_child()`: nextest (`cargo xtask ci`) gives every test a
//! process of its own, and under plain `cargo test` such a test runs again,
//! alone, in a child process.

mod extensions_e2e;
mod fleet_e2e;
mod fleet_native_e2e;
mod fleet_scale_e2e;
mod fleet_scale_otlp_e2e;
mod fleet_sd_e2e;
mod fleet_web_config_e2e;
mod gym_hostile_servers;
mod nemo_gym_e2e;
mod nemo_gym_trace_e2e;
mod ops_queries_e2e;
mod otlp_exemplars_e2e;
// Helpers that the otel and noop feature sets, with fewer tests, partly leave unused.
#[allow(dead_code)]
mod resources_server;
mod sigterm_flush;
#[allow(dead_code)]
mod support;
mod verify_endpoint;
// The listener under attack is the same code on every backend, and these
// tests read its counts through prom's scrape: the otel and noop feature sets
// would run the same 40 s of attacks again and read nothing more.
#[cfg(feature = "prom")]
mod verify_hostile_clients;
mod warnings_reach_the_user;
