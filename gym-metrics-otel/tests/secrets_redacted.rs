//! Credentials never reach what the backend prints: header values and the
//! user-info of an endpoint URL are redacted in configuration errors, in
//! the builder's `Debug`, in export-failure log lines and in the errors of
//! a failed final export. Every printing path gets a secret and must name
//! the variable or destination without it.

mod support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use gym_metrics_api::backend::Recorder;
use gym_metrics_otel::{BuildError, OtelBuilder, OtlpProtocol};
use support::counting_logger::CountingLogger;

const SECRET: &str = "s3cret";

fn assert_redacted(printed: &str, must_name: &str) {
    assert!(!printed.contains(SECRET), "a secret was printed: {printed}");
    assert!(
        printed.contains(must_name),
        "{must_name:?} missing: {printed}"
    );
}

fn build_error(builder: OtelBuilder) -> BuildError {
    match builder.build() {
        Err(e) => e,
        Ok(_) => panic!("expected a start-up error"),
    }
}

#[test]
fn a_bad_header_variable_is_named_without_its_values() {
    for variable in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    ] {
        let value = format!("authorization=Bearer%20{SECRET},broken");
        let e = OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone()))
            .unwrap_err();
        assert_eq!(e.variable(), variable);
        assert_redacted(&format!("{e} / {e:?}"), variable);
    }
}

#[test]
fn an_endpoint_variable_is_named_without_its_userinfo() {
    let variable = "OTEL_EXPORTER_OTLP_ENDPOINT";
    let value = format!("ftp://gym:{SECRET}@collector:4318");
    let e =
        OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone())).unwrap_err();
    assert_redacted(&format!("{e} / {e:?}"), variable);
    assert_redacted(&e.to_string(), "@collector:4318");
}

#[test]
fn an_invalid_header_value_is_named_without_it() {
    let e =
        build_error(OtelBuilder::new().headers([("authorization", format!("Bearer {SECRET}\n"))]));
    assert!(matches!(e, BuildError::Config(_)), "{e:?}");
    assert_redacted(&format!("{e} / {e:?}"), "authorization");
}

#[test]
fn an_invalid_endpoint_setting_is_named_without_its_userinfo() {
    for protocol in [OtlpProtocol::HttpProtobuf, OtlpProtocol::Grpc] {
        let e = build_error(
            OtelBuilder::new()
                .protocol(protocol)
                .endpoint(format!("ftp://gym:{SECRET}@collector:4318")),
        );
        assert_redacted(&format!("{e} / {e:?}"), "endpoint");
    }
}

#[test]
fn debug_of_the_builder_hides_headers_and_userinfo() {
    let vars = [
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("authorization=Bearer%20{SECRET}"),
        ),
        (
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            format!("http://gym:{SECRET}@collector:4318/v1/metrics"),
        ),
    ];
    let lookup = |name: &str| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    let builder = OtelBuilder::from_env_lookup(lookup).unwrap();
    let printed = format!("{builder:?} {builder:#?}");
    assert_redacted(&printed, "authorization");
    assert_redacted(&printed, "collector:4318/v1/metrics");
}

#[test]
fn export_failures_are_logged_and_returned_without_the_userinfo() {
    let log = CountingLogger::install();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (recorder, guard) = OtelBuilder::new()
        .endpoint(format!("http://gym:{SECRET}@127.0.0.1:{port}/v1/metrics"))
        .export_interval(Duration::from_millis(100))
        .export_timeout(Duration::from_millis(300))
        .shutdown_timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    recorder.record_rollout_duration_ms(120.0);
    let waiting_since = Instant::now();
    while log.lines(log::Level::Warn).is_empty()
        && waiting_since.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let warnings = log.lines(log::Level::Warn);
    assert!(!warnings.is_empty(), "no export failure was logged");
    for line in &warnings {
        assert_redacted(
            line,
            &format!("http://[redacted]@127.0.0.1:{port}/v1/metrics"),
        );
    }
    let e = guard
        .shutdown()
        .expect_err("nothing listens: the final export fails");
    assert_redacted(&format!("{e} / {e:?}"), "export");
}
