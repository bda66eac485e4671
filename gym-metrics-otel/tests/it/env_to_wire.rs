//! Settings read from `OTEL_*` variables reach the wire: endpoint, headers,
//! resource attributes and service name (variables passed through the lookup
//! closure, so no process environment is touched).
#![cfg(feature = "http-proto")]

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use opentelemetry_proto::tonic::common::v1::any_value;
use support::fake_collector::{histogram_point, Answer, FakeCollector};
use support::*;

#[test]
fn variables_configure_what_is_sent() {
    let collector = FakeCollector::start(Answer::Ok);
    let base = collector
        .endpoint()
        .trim_end_matches("/v1/metrics")
        .to_string();
    let vars: HashMap<&str, String> = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", base),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-tenant=lab%20one,authorization=Bearer t0k".to_string(),
        ),
        ("OTEL_SERVICE_NAME", "envtest".to_string()),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=ci".to_string(),
        ),
        ("OTEL_METRIC_EXPORT_INTERVAL", "100".to_string()),
    ]
    .into_iter()
    .collect();
    let (recorder, guard) = OtelBuilder::from_env_lookup(|name| vars.get(name).cloned())
        .unwrap()
        .role(Role::server("agent-3", "agent"))
        .build()
        .unwrap();
    record_reference_sequence(&recorder);
    let accepted = collector.wait_accepted(1, Duration::from_secs(3));
    guard.shutdown().unwrap();

    let request = accepted
        .first()
        .expect("an export to the base endpoint + /v1/metrics");
    assert_eq!(
        histogram_point(request, Instrument::VERIFY_DURATION.name).count,
        4
    );
    let headers = collector.last_headers();
    let header = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(header("x-tenant").as_deref(), Some("lab one"));
    assert_eq!(header("authorization").as_deref(), Some("Bearer t0k"));
    assert_eq!(
        header("content-type").as_deref(),
        Some("application/x-protobuf")
    );

    let resource = request.resource_metrics[0].resource.as_ref().unwrap();
    let attr = |k: &str| {
        resource
            .attributes
            .iter()
            .find(|a| a.key == k)
            .and_then(|a| match &a.value.as_ref()?.value {
                Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                _ => None,
            })
    };
    assert_eq!(attr("service.name").as_deref(), Some("envtest/agent-3"));
    assert_eq!(attr("deployment.environment").as_deref(), Some("ci"));
    assert_eq!(attr("nemo.gym.server.type").as_deref(), Some("agent"));
}
