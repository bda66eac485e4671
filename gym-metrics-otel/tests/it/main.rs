//! The OpenTelemetry backend's integration tests, linked once as one binary.
//!
//! A test that installs process-wide state (the facade's recorder, a logger,
//! the `metrics` recorder, environment variables) starts with
//! `gym_testkit::ran_in_child()`: nextest (`cargo xtask ci`) gives every test a
//! process of its own, and under plain `cargo test` such a test runs again,
//! alone, in a child process.

mod after_shutdown;
mod bad_input_props;
mod build_errors;
mod concurrency_exact;
mod console;
mod e2e_http_server_victoria;
mod e2e_metrics_bridge_victoria;
mod e2e_rotel_grpc;
mod e2e_rotel_grpc_restart;
mod e2e_tls_terminated;
mod e2e_victoria_http;
mod e2e_victoria_https;
mod env_to_wire;
mod exemplars;
mod fault_black_hole;
mod fault_http_429;
mod fault_http_500;
mod fault_redirect;
mod fault_refused;
mod fault_restart;
mod fault_retry;
mod fault_retry_grpc;
mod fault_slow_collector;
mod from_env_not_utf8;
mod from_process_env;
mod gym_enabled_false;
mod gym_memory;
mod gym_span_groups;
mod http_json;
mod inside_app_runtime;
mod install_none;
mod install_orchestrator;
mod metric_export_timeout;
mod metrics_bridge;
mod metrics_bridge_install;
mod metrics_bridge_recorder_taken;
mod native_meter_provider;
mod other_reqwest_clients;
mod process_metrics;
mod secrets_redacted;
mod support;
mod thread_local_destructor;
mod tls_config_errors;
mod tls_failures;
