//! e2e: a hyper 1 server behind the API's tower layer, recording through the
//! OpenTelemetry backend, pushed over OTLP/HTTP into a real VictoriaMetrics:
//! after a known mix of requests, `http_server_request_duration_seconds`
//! holds exactly the expected series and counts, and no raw path, query or
//! method spelling is a label value. (Global state: its own test binary.)
#![cfg(feature = "http-proto")]

use std::collections::BTreeMap;
use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;
use gym_testkit::{require, send_mix, serve_layered, Tool, VictoriaMetrics, ROUTES};

/// The attributes of the instrument, as VictoriaMetrics names them.
const ATTRIBUTES: [&str; 5] = [
    "error_type",
    "http_request_method",
    "http_response_status_code",
    "http_route",
    "url_scheme",
];

type Labels = Vec<(String, String)>;

fn expected() -> BTreeMap<Labels, f64> {
    let (m, s, r) = (
        "http_request_method",
        "http_response_status_code",
        "http_route",
    );
    let h = ("url_scheme", "http");
    [
        (vec![(m, "POST"), (s, "200"), (r, "/verify"), h], 3.0),
        (vec![(m, "GET"), (s, "200"), (r, "/tasks/{id}"), h], 3.0),
        (vec![(m, "GET"), (s, "200"), (r, "/health"), h], 1.0),
        (vec![(m, "GET"), (s, "404"), h], 2.0),
        (
            vec![
                ("error_type", "500"),
                (m, "GET"),
                (s, "500"),
                (r, "/fail"),
                h,
            ],
            1.0,
        ),
        (vec![(m, "_OTHER"), (s, "405"), (r, "/verify"), h], 1.0),
        // `get /health`: methods are case-sensitive; the handler says 404.
        (vec![(m, "_OTHER"), (s, "404"), (r, "/health"), h], 1.0),
        (vec![(m, "_OTHER"), (s, "404"), h], 1.0),
    ]
    .into_iter()
    .map(|(labels, v)| {
        let labels = labels
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (labels, v)
    })
    .collect()
}

#[test]
fn request_series_by_route_method_and_status_in_victoria_metrics() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::VictoriaMetrics);
    let vm = VictoriaMetrics::start().unwrap();
    let guard = OtelBuilder::new()
        .role(Role::server("math-verifier-0", "resources"))
        .service_name("e2e-http-layer")
        .endpoint(vm.otlp_http_metrics_endpoint())
        .export_interval(Duration::from_millis(300))
        .install()
        .unwrap();
    let addr = serve_layered().unwrap();
    let total = send_mix(addr).unwrap();
    guard.shutdown().unwrap(); // the final export carries every request

    let sel = r#"{service_name="e2e-http-layer/math-verifier-0"}"#;
    let promql = format!("http_server_request_duration_seconds_count{sel}");
    let counts = vm
        .wait_for(&promql, Duration::from_secs(10), |s| {
            s.iter().map(|s| s.value).sum::<f64>() == f64::from(total)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", vm.log_tail()));
    let got: BTreeMap<Labels, f64> = counts
        .iter()
        .map(|s| {
            let labels = s
                .labels
                .iter()
                .filter(|(k, _)| ATTRIBUTES.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (labels, s.value)
        })
        .collect();
    let want = expected();
    assert_eq!(got, want);

    let all = vm
        .query(r#"{__name__=~"http_server_request_duration_seconds_.*",service_name="e2e-http-layer/math-verifier-0"}"#)
        .unwrap();
    assert_eq!(
        all.len(),
        want.len() * (15 + 2),
        "15 buckets, sum and count per series"
    );
    for s in &all {
        if let Some(route) = s.labels.get("http_route") {
            assert!(ROUTES.contains(&route.as_str()), "{route}");
        }
        for v in s.labels.values() {
            for raw in ["12345", "abc", "hunter2", "teapot", "BREW", "PURGE", "/no/"] {
                assert!(
                    !v.contains(raw),
                    "raw request text {raw:?} became a label value: {:?}",
                    s.labels
                );
            }
        }
    }
    let inf = vm
        .query(r#"sum(http_server_request_duration_seconds_bucket{le="+Inf",service_name="e2e-http-layer/math-verifier-0"})"#)
        .unwrap();
    assert_eq!(inf[0].value, f64::from(total));
}
