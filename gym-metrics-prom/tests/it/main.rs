//! The Prometheus backend's integration tests, linked once as one binary.
//!
//! A test that installs process-wide state (the facade's recorder, a logger,
//! the `metrics` recorder, environment variables) starts with
//! `gym_testkit::ran_in_child()`: nextest (`cargo xtask ci`) gives every test a
//! process of its own, and under plain `cargo test` such a test runs again,
//! alone, in a child process.

mod absurd_durations;
mod accept_negotiation;
mod app_registry;
mod bad_input_props;
mod basic_auth_admission;
mod basic_auth_timing;
mod bind_errors;
mod byte_budgets;
mod common;
mod concurrency_exact;
mod e2e_exemplars_scraped_by_prometheus;
mod e2e_http_server_scraped_by_prometheus;
mod e2e_metrics_bridge_scraped_by_prometheus;
mod e2e_orchestrator_scraped_by_prometheus;
mod e2e_protobuf_scraped_by_prometheus;
mod e2e_server_scraped_by_prometheus;
mod e2e_tls_basic_auth_scraped_by_prometheus;
mod endpoint_install;
mod endpoint_limits;
mod exposed_bind_warning;
mod exposition_matches_opentelemetry;
mod exposure;
mod extensions_endpoint;
mod final_scrape;
mod fleet_sd_endpoint;
mod from_env;
mod from_env_not_utf8;
mod gym_disabled;
mod gym_memory;
mod gym_span_groups;
mod hostile_clients;
mod http_cardinality;
mod metrics_bridge;
mod native_extremes;
mod pinned_slots;
mod port_in_use;
mod process_metrics;
mod promtool_check;
mod resource_attributes_promtool;
mod thread_local_destructor;
mod traceparent_exemplars;
mod web_config_tls;
