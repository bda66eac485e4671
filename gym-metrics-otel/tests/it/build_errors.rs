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
    let e = config_error(OtelBuilder::new().endpoint("ftp://collector:4318/v1/metrics"));
    assert!(e.contains("endpoint") && e.contains("https://"), "{e}");
    // A bare host:port is a gRPC endpoint (TLS unless insecure), never an OTLP/HTTP one.
    let e = config_error(OtelBuilder::new().endpoint("collector:4318"));
    assert!(
        e.contains("endpoint") && e.contains("collector:4318"),
        "{e}"
    );
    let e = config_error(
        OtelBuilder::new()
            .protocol(OtlpProtocol::Grpc)
            .endpoint("grpc://collector:4317"),
    );
    assert!(
        e.contains("endpoint") && e.contains("collector:4317"),
        "{e}"
    );
    let e = config_error(OtelBuilder::new().headers([("bad header", "v")]));
    assert!(e.contains("HEADERS") && e.contains("bad header"), "{e}");
}

#[cfg(not(feature = "tls"))]
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
