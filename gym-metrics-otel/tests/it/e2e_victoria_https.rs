//! OTLP http/protobuf over https straight into VictoriaMetrics started with
//! `-tls -tlsCertFile -tlsKeyFile` (a certificate made by the test, trusted
//! through the CA setting or `OTEL_EXPORTER_OTLP_CERTIFICATE`); read back
//! with PromQL on its plain listener.
#![cfg(all(feature = "tls", feature = "http-proto"))]

use crate::support::tls::Pki;
use crate::support::victoria::{assert_reference_sequence, dump};
use crate::support::*;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use gym_testkit::{require, Tool, VictoriaMetrics};

#[test]
fn reference_sequence_lands_in_victoria_metrics_over_https() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::VictoriaMetrics);
    let pki = Pki::new("vm-https");
    let vm = VictoriaMetrics::start_tls(&pki.server_cert, &pki.server_key).unwrap();
    let endpoint = vm.otlp_https_metrics_endpoint().unwrap();
    // The orchestrator through builder settings, the server through variables.
    let (orchestrator, orchestrator_guard) = OtelBuilder::new()
        .role(Role::orchestrator())
        .service_name("e2e-https")
        .endpoint(endpoint.clone())
        .certificate(&pki.ca)
        .export_interval(std::time::Duration::from_millis(300))
        .build()
        .unwrap();
    let env = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some(endpoint.clone()),
        "OTEL_EXPORTER_OTLP_CERTIFICATE" => Some(pki.ca.display().to_string()),
        "OTEL_SERVICE_NAME" => Some("e2e-https".to_string()),
        "OTEL_METRIC_EXPORT_INTERVAL" => Some("300".to_string()),
        _ => None,
    };
    let (server, server_guard) = OtelBuilder::from_env_lookup(env)
        .unwrap()
        .role(Role::server("math-0", "resources"))
        .build()
        .unwrap();
    record_reference_sequence(&orchestrator);
    record_reference_sequence(&server);
    orchestrator_guard.shutdown().unwrap();
    server_guard.shutdown().unwrap();

    let check = std::panic::catch_unwind(|| {
        assert_reference_sequence(&vm, "e2e-https/orchestrator", true);
        assert_reference_sequence(&vm, "e2e-https/math-0", false);
    });
    eprintln!("series in VictoriaMetrics:\n{}", dump(&vm));
    if let Err(e) = check {
        eprintln!("victoria-metrics log:\n{}", vm.log_tail());
        std::panic::resume_unwind(e);
    }
}
