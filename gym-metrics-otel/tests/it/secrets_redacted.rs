//! Credentials never reach what the backend prints: header values and the
//! user-info of an endpoint URL are redacted in configuration errors, in
//! the builder's `Debug`, in export-failure log lines and in the errors of
//! a failed final export. Every printing path gets a secret and must name
//! the variable or destination without it.

#[cfg(feature = "http-proto")]
use std::net::TcpListener;
#[cfg(feature = "http-proto")]
use std::time::{Duration, Instant};

#[cfg(feature = "http-proto")]
use crate::support::counting_logger::CountingLogger;
#[cfg(feature = "http-proto")]
use gym_metrics_api::backend::Recorder;
use gym_metrics_otel::{BuildError, OtelBuilder, OtlpProtocol};

const SECRET: &str = "s3cret";

fn assert_redacted(printed: &str, must_name: &str) {
    assert!(!printed.contains(SECRET), "a secret was printed: {printed}");
    assert!(
        printed.contains(must_name),
        "{must_name:?} missing: {printed}"
    );
}

/// The warnings naming `destination`, once there is one (at most 20 s).
#[cfg(feature = "http-proto")]
fn wait_for_warnings(log: &CountingLogger, destination: &str) -> Vec<String> {
    let ours = || -> Vec<String> {
        log.lines(log::Level::Warn)
            .into_iter()
            .filter(|l| l.contains(destination))
            .collect()
    };
    let waiting_since = Instant::now();
    while ours().is_empty() && waiting_since.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    ours()
}

fn build_error(builder: OtelBuilder) -> BuildError {
    match builder.build() {
        Err(e) => e,
        Ok(_) => panic!("expected a start-up error"),
    }
}

#[test]
fn a_bad_header_variable_is_named_without_its_values() {
    if gym_testkit::ran_in_child() {
        return;
    }
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

/// CR/LF (raw or percent-encoded: a header injected after the value), a
/// NUL, and a 100 kB value: start-up errors from `from_env_lookup` itself,
/// naming the variable, the value redacted and the message short.
#[test]
fn a_header_variable_with_cr_lf_or_a_100_kb_value_is_named_without_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let huge = format!("authorization=Bearer%20{SECRET}{}", "A".repeat(100 * 1024));
    for variable in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    ] {
        for value in [
            format!("authorization=Bearer%20{SECRET}%0D%0Ax-injected=1"),
            format!("authorization=Bearer {SECRET}\r\nx-injected: 1"),
            format!("authorization=Bearer%20{SECRET}%0A"),
            format!("authorization={SECRET}%00"),
            huge.clone(),
        ] {
            let e = OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone()))
                .unwrap_err();
            assert_eq!(e.variable(), variable);
            let printed = format!("{e} / {e:?}");
            assert_redacted(&printed, variable);
            assert_redacted(&printed, "authorization=");
            assert!(printed.len() < 2_000, "{} bytes printed", printed.len());
        }
    }
    // The same through the builder setting: refused by `build`.
    #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
    for value in [
        format!("Bearer {SECRET}\r\nx-injected: 1"),
        format!("Bearer {SECRET}{}", "A".repeat(100 * 1024)),
    ] {
        let e = build_error(OtelBuilder::new().headers([("authorization", value)]));
        assert!(matches!(e, BuildError::Config(_)), "{e:?}");
        let printed = format!("{e} / {e:?}");
        assert_redacted(&printed, "authorization");
        assert!(printed.len() < 2_000, "{} bytes printed", printed.len());
    }
}

#[test]
fn an_endpoint_variable_is_named_without_its_userinfo() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let variable = "OTEL_EXPORTER_OTLP_ENDPOINT";
    let value = format!("ftp://gym:{SECRET}@collector:4318");
    let e =
        OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone())).unwrap_err();
    assert_redacted(&format!("{e} / {e:?}"), variable);
    assert_redacted(&e.to_string(), "@collector:4318");
}

#[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
#[test]
fn an_invalid_header_value_is_named_without_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let e =
        build_error(OtelBuilder::new().headers([("authorization", format!("Bearer {SECRET}\n"))]));
    assert!(matches!(e, BuildError::Config(_)), "{e:?}");
    assert_redacted(&format!("{e} / {e:?}"), "authorization");
}

#[test]
fn an_invalid_endpoint_setting_is_named_without_its_userinfo() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for protocol in [OtlpProtocol::HttpProtobuf, OtlpProtocol::Grpc]
        .into_iter()
        .filter(|p| p.is_built())
    {
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
    if gym_testkit::ran_in_child() {
        return;
    }
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

#[cfg(feature = "http-proto")]
#[test]
fn export_failures_are_logged_and_returned_without_the_userinfo() {
    if gym_testkit::ran_in_child() {
        return;
    }
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
    // This test's lines: the other tests of this binary log too.
    let warnings = wait_for_warnings(log, &format!("127.0.0.1:{port}"));
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

/// Issue 26, finding 6: a secret in the endpoint's query string
/// (`?api_key=…`) reaches the collector where it belongs, after the signal
/// path, and no log line; the warnings still name the collector.
#[cfg(feature = "http-proto")]
#[test]
fn a_query_secret_reaches_the_collector_after_the_signal_path_and_no_log_line() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let collector = crate::support::fake_collector::FakeCollector::start(
        crate::support::fake_collector::Answer::InternalError,
    );
    let base = format!("http://127.0.0.1:{}?api_key={SECRET}", collector.port());
    let (recorder, guard) = OtelBuilder::from_env_lookup(|name| {
        (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| base.clone())
    })
    .unwrap()
    .export_interval(Duration::from_millis(100))
    .export_timeout(Duration::from_millis(500))
    .shutdown_timeout(Duration::from_secs(3))
    .build()
    .unwrap();
    recorder.record_rollout_duration_ms(120.0);
    let destination = format!("127.0.0.1:{}/v1/metrics?api_key=", collector.port());
    let ours = wait_for_warnings(log, &destination);
    assert!(!ours.is_empty(), "no export failure was logged");
    let e = guard
        .shutdown()
        .expect_err("the collector answers 500: the final export fails");
    assert_redacted(&format!("{e} / {e:?}"), "export");
    let targets = collector.targets();
    assert!(
        targets
            .iter()
            .all(|t| *t == format!("/v1/metrics?api_key={SECRET}")),
        "{targets:?}"
    );
    assert!(!targets.is_empty(), "no export reached the collector");
    for line in &ours {
        assert_redacted(line, &format!("{destination}[redacted]"));
    }
    for line in log.lines(log::Level::Warn) {
        assert!(!line.contains(SECRET), "a secret was printed: {line}");
    }
}

/// Issue 26, finding 6: a password with a `?` (or `#`, `/`) unescaped is not a
/// URL's user-info to any URL parser: it is refused at start-up, and the
/// error names the variable without the password.
#[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
#[test]
fn a_password_with_a_question_mark_is_refused_without_printing_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for (variable, password) in [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "p?w"),
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "p?w"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "p#w"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "p/w"),
    ] {
        let value = format!("http://u:{password}@127.0.0.1:4318/v1/metrics");
        let e = OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone()))
            .unwrap_err();
        assert_eq!(e.variable(), variable);
        let printed = format!("{e} / {e:?}");
        assert!(!printed.contains(password), "{printed}");
        assert!(printed.contains("127.0.0.1:4318"), "{printed}");
    }
    let e = build_error(OtelBuilder::new().endpoint("http://u:p?w@127.0.0.1:4318/v1/metrics"));
    let printed = format!("{e} / {e:?}");
    assert!(
        !printed.contains("p?w") && printed.contains("endpoint"),
        "{printed}"
    );
}

/// Issue 26, finding 6: a port outside 1..=65535 is a start-up error naming
/// the variable, not an exporter that fails at every export.
#[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
#[test]
fn a_port_out_of_range_is_a_start_up_error() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for variable in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    ] {
        for port in ["99999", "0"] {
            let value = format!("http://127.0.0.1:{port}/v1/metrics");
            let e = OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone()))
                .err()
                .unwrap_or_else(|| panic!("{variable}={value} was accepted"));
            assert_eq!(e.variable(), variable);
            assert!(e.to_string().contains(&value), "{e}");
        }
    }
    let e = build_error(OtelBuilder::new().endpoint("http://127.0.0.1:99999/v1/metrics"));
    assert!(matches!(e, BuildError::Config(_)), "{e:?}");
    assert!(e.to_string().contains("endpoint"), "{e}");
}
