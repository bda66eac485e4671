//! TLS failures at export time: a server certificate our CA did not sign, an
//! expired one, a server demanding a client certificate we lack or one it
//! does not trust. Each fails the export (never a panic), is logged once
//! then rate-limited, the process keeps recording, and shutdown keeps its
//! deadline. A trusted control case shows the same set-up does export. The
//! server is a real rustls one (`crate::support::tls::TlsTerminator`) in front of
//! the fake collector.
#![cfg(all(feature = "tls", feature = "http-proto"))]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::counting_logger::CountingLogger;
use crate::support::fake_collector::{int_value, Answer, FakeCollector};
use crate::support::tls::{socket_of, Pki, TlsTerminator};
use crate::support::*;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtlpProtocol};

const DEADLINE: Duration = Duration::from_millis(1500);

struct Case<'a> {
    name: &'static str,
    server_cert: &'a Path,
    server_key: &'a Path,
    /// The server demands a client certificate signed by this CA.
    client_ca: Option<&'a Path>,
    /// The client's certificate and key, if it has one.
    identity: Option<(&'a Path, &'a Path)>,
    protocol: OtlpProtocol,
}

fn pipeline(case: &Case<'_>, pki: &Pki, port: u16) -> (String, OtelBuilder) {
    let endpoint = match case.protocol {
        OtlpProtocol::Grpc => format!("https://127.0.0.1:{port}"),
        _ => format!("https://127.0.0.1:{port}/v1/metrics"),
    };
    let mut builder = OtelBuilder::new()
        .role(Role::orchestrator())
        .protocol(case.protocol)
        .endpoint(endpoint.clone())
        .certificate(&pki.ca)
        .export_interval(Duration::from_millis(100))
        .export_timeout(Duration::from_millis(500))
        .shutdown_timeout(DEADLINE);
    if let Some((cert, key)) = case.identity {
        builder = builder.client_certificate(cert).client_key(key);
    }
    (endpoint, builder)
}

#[test]
fn tls_failures_fail_the_export_log_once_and_keep_the_deadline() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let pki = Pki::new("failures");
    let collector = FakeCollector::start(Answer::Ok);
    let upstream = socket_of(&collector.endpoint());

    // Control: the same set-up with a certificate we trust exports exactly.
    {
        let tls = TlsTerminator::start(&pki.server_cert, &pki.server_key, Some(&pki.ca), upstream);
        let control = Case {
            name: "control",
            server_cert: &pki.server_cert,
            server_key: &pki.server_key,
            client_ca: Some(&pki.ca),
            identity: Some((&pki.client_cert, &pki.client_key)),
            protocol: OtlpProtocol::HttpProtobuf,
        };
        let (_, builder) = pipeline(&control, &pki, tls.port());
        let (recorder, guard) = builder.build().unwrap();
        record_reference_sequence(&recorder);
        guard.shutdown().unwrap();
        let last = collector
            .accepted()
            .pop()
            .expect("the control case exported");
        assert_eq!(int_value(&last, Instrument::VERIFY_COMPLETED.name), 4);
    }

    let cases = [
        Case {
            name: "untrusted server certificate (http)",
            server_cert: &pki.untrusted_server_cert,
            server_key: &pki.untrusted_server_key,
            client_ca: None,
            identity: None,
            protocol: OtlpProtocol::HttpProtobuf,
        },
        Case {
            name: "untrusted server certificate (grpc)",
            server_cert: &pki.untrusted_server_cert,
            server_key: &pki.untrusted_server_key,
            client_ca: None,
            identity: None,
            protocol: OtlpProtocol::Grpc,
        },
        Case {
            name: "expired server certificate (http/json)",
            server_cert: &pki.expired_server_cert,
            server_key: &pki.expired_server_key,
            client_ca: None,
            identity: None,
            protocol: OtlpProtocol::HttpJson,
        },
        Case {
            name: "expired server certificate (grpc)",
            server_cert: &pki.expired_server_cert,
            server_key: &pki.expired_server_key,
            client_ca: None,
            identity: None,
            protocol: OtlpProtocol::Grpc,
        },
        Case {
            name: "no client certificate for an mTLS server (http)",
            server_cert: &pki.server_cert,
            server_key: &pki.server_key,
            client_ca: Some(&pki.ca),
            identity: None,
            protocol: OtlpProtocol::HttpProtobuf,
        },
        Case {
            name: "client certificate the server does not trust (grpc)",
            server_cert: &pki.server_cert,
            server_key: &pki.server_key,
            client_ca: Some(&pki.ca),
            identity: Some((&pki.foreign_client_cert, &pki.foreign_client_key)),
            protocol: OtlpProtocol::Grpc,
        },
    ];
    let exported_before = collector.attempts();
    for case in cases.iter().filter(|c| c.protocol.is_built()) {
        let tls = TlsTerminator::start(case.server_cert, case.server_key, case.client_ca, upstream);
        let (endpoint, builder) = pipeline(case, &pki, tls.port());
        let (recorder, guard) = builder.build().unwrap();
        let failing_since = Instant::now();
        while failing_since.elapsed() < Duration::from_millis(1000) {
            record_reference_sequence(&recorder);
            std::thread::sleep(Duration::from_millis(20));
        }
        let flush = guard.force_flush();
        assert!(flush.is_err(), "{}: the export succeeded", case.name);
        // Still recording after a second of failed exports.
        record_reference_sequence(&recorder);

        let warnings: Vec<String> = log
            .lines(log::Level::Warn)
            .into_iter()
            .filter(|l| l.contains(&endpoint))
            .collect();
        assert_eq!(warnings.len(), 1, "{}: {warnings:#?}", case.name);
        assert!(
            tls.handshakes_failed() >= 2,
            "{}: {} failed handshakes; every export must retry, not give up",
            case.name,
            tls.handshakes_failed()
        );

        let start = Instant::now();
        let result = guard.shutdown();
        let took = start.elapsed();
        eprintln!(
            "{}: {warnings:?}; shutdown took {took:?}: {result:?}",
            case.name
        );
        assert!(
            result.is_err(),
            "{}: the final export cannot succeed",
            case.name
        );
        assert!(
            took < DEADLINE + Duration::from_millis(300),
            "{}: {took:?}",
            case.name
        );
    }
    assert_eq!(
        collector.attempts(),
        exported_before,
        "no failing case may reach the collector"
    );
}
