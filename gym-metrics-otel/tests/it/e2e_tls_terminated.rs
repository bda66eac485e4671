//! gRPC over TLS, and mTLS over both transports, through a rustls TLS server
//! of the tests' own (`crate::support::tls::TlsTerminator`: rotel 0.0.1-alpha10's
//! receivers have no TLS flags, and no packaged server here demands client
//! certificates) in front of real rotel (gRPC, forwarding to VictoriaMetrics)
//! and real VictoriaMetrics (http/protobuf); read back with PromQL.
#![cfg(all(feature = "tls", any(feature = "grpc", feature = "http-proto")))]

use std::time::Duration;

use crate::support::tls::{socket_of, Pki, TlsTerminator};
use crate::support::victoria::{assert_reference_sequence, dump};
use crate::support::*;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
#[cfg(feature = "grpc")]
use gym_metrics_otel::OtlpProtocol;
#[cfg(feature = "grpc")]
use gym_testkit::Rotel;
use gym_testkit::{require, Tool, VictoriaMetrics};

#[cfg(feature = "grpc")]
fn tools() {
    require(Tool::VictoriaMetrics);
    require(Tool::Rotel);
}

/// Both roles through `builder(role)`, the reference sequence, shut down,
/// and the exact values read back under `service`.
fn run(vm: &VictoriaMetrics, service: &str, builder: impl Fn() -> OtelBuilder) {
    let (orchestrator, orchestrator_guard) = builder()
        .role(Role::orchestrator())
        .service_name(service)
        .export_interval(Duration::from_millis(300))
        .build()
        .unwrap();
    let (server, server_guard) = builder()
        .role(Role::server("math-0", "resources"))
        .service_name(service)
        .export_interval(Duration::from_millis(300))
        .build()
        .unwrap();
    record_reference_sequence(&orchestrator);
    record_reference_sequence(&server);
    orchestrator_guard.shutdown().unwrap();
    server_guard.shutdown().unwrap();
    let check = std::panic::catch_unwind(|| {
        assert_reference_sequence(vm, &format!("{service}/orchestrator"), true);
        assert_reference_sequence(vm, &format!("{service}/math-0"), false);
    });
    if let Err(e) = check {
        eprintln!("series in VictoriaMetrics:\n{}", dump(vm));
        std::panic::resume_unwind(e);
    }
}

#[cfg(feature = "grpc")]
#[test]
fn grpc_over_tls_through_rotel() {
    if gym_testkit::ran_in_child() {
        return;
    }
    tools();
    let pki = Pki::new("grpc-tls");
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    let tls = TlsTerminator::start(
        &pki.server_cert,
        &pki.server_key,
        None,
        socket_of(&rotel.grpc_endpoint()),
    );
    // A bare host:port: TLS, as the specification says when not insecure.
    let endpoint = format!("127.0.0.1:{}", tls.port());
    run(&vm, "e2e-grpc-tls", || {
        OtelBuilder::new()
            .protocol(OtlpProtocol::Grpc)
            .endpoint(endpoint.clone())
            .certificate(&pki.ca)
    });
    assert!(
        tls.handshakes_ok() >= 2,
        "{} handshakes",
        tls.handshakes_ok()
    );
    assert_eq!(tls.handshakes_failed(), 0);
}

#[cfg(feature = "grpc")]
#[test]
fn grpc_mtls_through_rotel() {
    if gym_testkit::ran_in_child() {
        return;
    }
    tools();
    let pki = Pki::new("grpc-mtls");
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    let tls = TlsTerminator::start(
        &pki.server_cert,
        &pki.server_key,
        Some(&pki.ca),
        socket_of(&rotel.grpc_endpoint()),
    );
    let endpoint = format!("https://127.0.0.1:{}", tls.port());
    let env = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("grpc".to_string()),
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(endpoint.clone()),
        "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE" => Some(pki.ca.display().to_string()),
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE" => {
            Some(pki.client_cert.display().to_string())
        }
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY" => Some(pki.client_key.display().to_string()),
        _ => None,
    };
    run(&vm, "e2e-grpc-mtls", || {
        OtelBuilder::from_env_lookup(env).unwrap()
    });
    assert!(
        tls.handshakes_ok() >= 2,
        "{} handshakes",
        tls.handshakes_ok()
    );
}

#[cfg(feature = "http-proto")]
#[test]
fn http_mtls_into_victoria_metrics() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::VictoriaMetrics);
    let pki = Pki::new("http-mtls");
    let vm = VictoriaMetrics::start().unwrap();
    let tls = TlsTerminator::start(
        &pki.server_cert,
        &pki.server_key,
        Some(&pki.ca),
        socket_of(&vm.url()),
    );
    let endpoint = format!("https://127.0.0.1:{}/opentelemetry/v1/metrics", tls.port());
    run(&vm, "e2e-http-mtls", || {
        OtelBuilder::new()
            .endpoint(endpoint.clone())
            .certificate(&pki.ca)
            .client_certificate(&pki.client_cert)
            .client_key(&pki.client_key)
    });
    assert!(
        tls.handshakes_ok() >= 2,
        "{} handshakes",
        tls.handshakes_ok()
    );
}

#[cfg(feature = "grpc")]
#[test]
fn insecure_makes_a_bare_grpc_endpoint_plaintext() {
    if gym_testkit::ran_in_child() {
        return;
    }
    tools();
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    // rotel's plain gRPC port, given without a scheme: only INSECURE=true
    // makes it plaintext (without it the exporter would try TLS and fail).
    let bare = rotel
        .grpc_endpoint()
        .trim_start_matches("http://")
        .to_string();
    let env = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("grpc".to_string()),
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(bare.clone()),
        "OTEL_EXPORTER_OTLP_INSECURE" => Some("true".to_string()),
        _ => None,
    };
    run(&vm, "e2e-grpc-insecure", || {
        OtelBuilder::from_env_lookup(env).unwrap()
    });
    // The same endpoint without INSECURE means TLS, which rotel's plain port
    // cannot speak: the export fails.
    let (recorder, guard) = OtelBuilder::new()
        .protocol(OtlpProtocol::Grpc)
        .endpoint(bare.clone())
        .shutdown_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    assert!(
        guard.force_flush().is_err(),
        "TLS to a plaintext port succeeded"
    );
}
