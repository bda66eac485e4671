//! Invalid settings are start-up errors that name the setting.

use std::time::Duration;

use gym_metrics_otel::{BuildError, OtelBuilder, OtlpProtocol};

fn config_error(builder: OtelBuilder) -> String {
    match builder.build() {
        Err(BuildError::Config(e)) => e.to_string(),
        Err(other) => panic!("expected a configuration error, got {other}"),
        Ok(_) => panic!("expected a configuration error, got a running pipeline"),
    }
}

#[test]
fn bad_settings_name_themselves() {
    let e = config_error(OtelBuilder::new().export_interval(Duration::ZERO));
    assert!(e.contains("export_interval"), "{e}");
    // The rest is checked once the protocol's transport is known to be built.
    if cfg!(feature = "http-proto") {
        let e = config_error(OtelBuilder::new().endpoint("ftp://collector:4318/v1/metrics"));
        assert!(e.contains("endpoint") && e.contains("https://"), "{e}");
        // A bare host:port is a gRPC endpoint (TLS unless insecure), never an OTLP/HTTP one.
        let e = config_error(OtelBuilder::new().endpoint("collector:4318"));
        assert!(
            e.contains("endpoint") && e.contains("collector:4318"),
            "{e}"
        );
        let e = config_error(OtelBuilder::new().headers([("bad header", "v")]));
        assert!(e.contains("HEADERS") && e.contains("bad header"), "{e}");
    }
    if cfg!(feature = "grpc") {
        let e = config_error(
            OtelBuilder::new()
                .protocol(OtlpProtocol::Grpc)
                .endpoint("grpc://collector:4317"),
        );
        assert!(
            e.contains("endpoint") && e.contains("collector:4317"),
            "{e}"
        );
    }
}

#[cfg(all(
    not(feature = "tls"),
    any(feature = "grpc", feature = "http-proto", feature = "http-json")
))]
#[test]
fn without_the_tls_feature_https_is_rejected() {
    let e = config_error(OtelBuilder::new().endpoint("https://collector:4318/v1/metrics"));
    assert!(e.contains("endpoint") && e.contains("`tls` feature"), "{e}");
    let e = config_error(OtelBuilder::new().certificate("/etc/ca.pem"));
    assert!(
        e.contains("certificate") && e.contains("`tls` feature"),
        "{e}"
    );
}

/// Issue 29: each OTLP transport is a Cargo feature. Selecting one that
/// is compiled out, by the builder or either protocol variable, is a
/// start-up error naming the setting, its value and the feature; one
/// that is built starts. Every build of this binary checks its own set.
#[test]
fn a_protocol_compiled_out_is_an_error_naming_the_variable_and_the_feature() {
    let protocols = [
        (
            OtlpProtocol::HttpProtobuf,
            "http-proto",
            "http://127.0.0.1:9/v1/metrics",
        ),
        (
            OtlpProtocol::HttpJson,
            "http-json",
            "http://127.0.0.1:9/v1/metrics",
        ),
        (OtlpProtocol::Grpc, "grpc", "http://127.0.0.1:9"),
    ];
    for (protocol, feature, endpoint) in protocols {
        assert_eq!(protocol.cargo_feature(), feature);
        let by_builder = OtelBuilder::new()
            .protocol(protocol)
            .endpoint(endpoint)
            .shutdown_timeout(Duration::from_millis(200));
        let (variable, value) = (
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            protocol.name().to_uppercase(),
        );
        let by_variable = OtelBuilder::from_env_lookup(|name| match name {
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL" => Some(value.clone()),
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some(endpoint.to_string()),
            _ => None,
        })
        .expect("every protocol parses in every build")
        .shutdown_timeout(Duration::from_millis(200));
        let cases = [
            ("protocol", protocol.name().to_string(), by_builder),
            (variable, value.clone(), by_variable),
        ];
        for (setting, given, builder) in cases {
            match builder.build() {
                Ok((_recorder, guard)) => {
                    assert!(
                        protocol.is_built(),
                        "{protocol:?} started without `{feature}`"
                    );
                    // Nothing listens: only the start matters here.
                    let _ = guard.shutdown();
                }
                Err(e) => {
                    assert!(!protocol.is_built(), "{protocol:?} is built, yet: {e}");
                    let text = e.to_string();
                    match e {
                        BuildError::TransportNotBuilt {
                            variable,
                            value,
                            feature: named,
                        } => {
                            assert_eq!(
                                (variable, value.as_str(), named),
                                (setting, given.as_str(), feature)
                            );
                        }
                        other => panic!("expected TransportNotBuilt, got {other:?}"),
                    }
                    let quoted = format!("{setting}={given:?}");
                    assert!(text.contains(&quoted), "{text}");
                    assert!(
                        text.contains(&format!("Cargo feature `{feature}`")),
                        "{text}"
                    );
                }
            }
        }
    }
}

/// With no protocol set, the default (http/protobuf) gives way to a built
/// transport; a build with none refuses OTLP, naming the exporter, and the
/// console exporter still works.
#[test]
fn an_unset_protocol_uses_a_built_transport_or_names_the_exporter() {
    let any_built = [
        OtlpProtocol::HttpProtobuf,
        OtlpProtocol::HttpJson,
        OtlpProtocol::Grpc,
    ]
    .into_iter()
    .any(OtlpProtocol::is_built);
    let result = OtelBuilder::from_env_lookup(|name| {
        (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://127.0.0.1:9".to_string())
    })
    .expect("no variable is bad")
    .shutdown_timeout(Duration::from_millis(200))
    .build();
    match result {
        Ok((_recorder, guard)) => {
            assert!(any_built, "OTLP started without a transport");
            let _ = guard.shutdown();
        }
        Err(e) => {
            assert!(!any_built, "a transport is built, yet: {e}");
            assert!(
                matches!(
                    e,
                    BuildError::TransportNotBuilt {
                        variable: "exporter (OTEL_METRICS_EXPORTER)",
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("console or none"), "{e}");
        }
    }
    let (_recorder, guard) = OtelBuilder::new()
        .exporter(gym_metrics_otel::MetricsExporter::Console)
        .console_writer(std::io::sink())
        .build()
        .expect("the console exporter needs no transport");
    guard
        .shutdown()
        .expect("the console takes the final export");
}

/// Issue 26, finding 9: an export interval below the floor (50 ms) is
/// refused at start-up, naming the variable or setting, instead of
/// exporting a thousand times a second.
#[test]
fn an_export_interval_below_the_floor_is_refused() {
    for ms in [1, 49] {
        let e = config_error(OtelBuilder::new().export_interval(Duration::from_millis(ms)));
        assert!(e.contains("export_interval") && e.contains("50"), "{e}");
        let value = ms.to_string();
        let e = OtelBuilder::from_env_lookup(|name| {
            (name == "OTEL_METRIC_EXPORT_INTERVAL").then(|| value.clone())
        })
        .err()
        .unwrap_or_else(|| panic!("OTEL_METRIC_EXPORT_INTERVAL={ms} was accepted"));
        assert_eq!(e.variable(), "OTEL_METRIC_EXPORT_INTERVAL");
        assert!(e.expected().contains("50"), "{e}");
    }
    let (_recorder, guard) = OtelBuilder::new()
        .exporter(gym_metrics_otel::MetricsExporter::None)
        .export_interval(Duration::from_millis(50))
        .build()
        .expect("the floor itself is accepted");
    guard.shutdown().expect("nothing to flush");
}
