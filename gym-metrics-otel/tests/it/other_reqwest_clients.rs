//! This crate turns on reqwest's `rustls-no-provider` feature, and Cargo
//! unifies features across a build: without a process-wide rustls provider,
//! every other reqwest client of the build (the application's own, or
//! `opentelemetry-otlp`'s default HTTP client) panics when it is made. Once
//! the backend is built, they work. Its own binary: the provider is
//! process-wide.
#![cfg(all(feature = "tls", any(feature = "http-proto", feature = "http-json")))]

use gym_metrics_otel::{MetricsExporter, OtelBuilder};

#[test]
fn another_reqwest_client_can_be_made_once_the_backend_is_built() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_recorder, guard) = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .build()
        .expect("the backend builds");
    let made = std::panic::catch_unwind(reqwest::blocking::Client::new);
    assert!(made.is_ok(), "a plain reqwest client panicked");
    guard.shutdown().expect("shutdown");
}
