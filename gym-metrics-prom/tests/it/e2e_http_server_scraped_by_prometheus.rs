//! e2e: a hyper 1 server behind the API's tower layer (through hyper-util's
//! `TowerToHyperService`), scraped by a real Prometheus: after a known mix of
//! requests, `http_server_request_duration_seconds` holds exactly the expected
//! series and counts, and no raw path, query or method spelling is a label
//! value. (Global state: its own test binary.)

use std::collections::BTreeMap;
use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{require, send_mix, serve_layered, Prometheus, Tool, ROUTES};

fn expected() -> BTreeMap<Vec<(&'static str, &'static str)>, f64> {
    let m = "http_request_method";
    let s = "http_response_status_code";
    let r = "http_route";
    BTreeMap::from([
        (vec![(m, "POST"), (s, "200"), (r, "/verify")], 3.0),
        (vec![(m, "GET"), (s, "200"), (r, "/tasks/{id}")], 3.0),
        (vec![(m, "GET"), (s, "200"), (r, "/health")], 1.0),
        (vec![(m, "GET"), (s, "404")], 2.0),
        (
            vec![("error_type", "500"), (m, "GET"), (s, "500"), (r, "/fail")],
            1.0,
        ),
        (vec![(m, "_OTHER"), (s, "405"), (r, "/verify")], 1.0),
        // `BREW /teapot` and `get /health` (methods are case-sensitive; the handler says 404).
        (vec![(m, "_OTHER"), (s, "404"), (r, "/health")], 1.0),
        (vec![(m, "_OTHER"), (s, "404")], 1.0),
    ])
}

#[test]
fn request_series_by_route_method_and_status_in_prometheus() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-verifier-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    let addr = serve_layered().unwrap();
    let total = send_mix(addr).unwrap();

    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
         scrape_configs:\n  - job_name: gym\n    static_configs:\n      - targets: ['{}']\n",
        guard.local_addr()
    );
    let prometheus = Prometheus::start_with_config(&config).unwrap();
    let counts = prometheus
        .wait_for(
            "http_server_request_duration_seconds_count",
            Duration::from_secs(15),
            |s| s.iter().map(|s| s.value).sum::<f64>() == total as f64,
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));

    let fixed = [
        ("job", "gym"),
        ("url_scheme", "http"),
        ("otel_scope_name", gym_metrics_prom::SCOPE_NAME),
        ("otel_scope_version", gym_metrics_prom::SCOPE_VERSION),
    ];
    let got: BTreeMap<Vec<(String, String)>, f64> = counts
        .iter()
        .map(|s| {
            for (k, v) in fixed {
                assert_eq!(
                    s.labels.get(k).map(String::as_str),
                    Some(v),
                    "{k} of {:?}",
                    s.labels
                );
            }
            let rest = s
                .labels
                .iter()
                .filter(|(k, _)| {
                    !["__name__", "instance"].contains(&k.as_str())
                        && !fixed.iter().any(|f| f.0 == *k)
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (rest, s.value)
        })
        .collect();
    let want: BTreeMap<Vec<(String, String)>, f64> = expected()
        .into_iter()
        .map(|(k, v)| {
            (
                k.into_iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect(),
                v,
            )
        })
        .collect();
    assert_eq!(got, want);

    // Every bucket of every series, and the sum: no label value anywhere is a raw path.
    let all = prometheus
        .query(r#"{__name__=~"http_server_request_duration_seconds_.*"}"#)
        .unwrap();
    assert_eq!(
        all.len(),
        want.len() * (15 + 2),
        "15 buckets, sum and count per series"
    );
    let routes: Vec<&str> = ROUTES.to_vec();
    for s in &all {
        if let Some(route) = s.labels.get("http_route") {
            assert!(routes.contains(&route.as_str()), "{route}");
        }
        for v in s.labels.values() {
            for raw in [
                "12345", "abc", "hunter2", "teapot", "BREW", "PURGE", "get", "/no/",
            ] {
                assert!(
                    !v.contains(raw),
                    "raw request text {raw:?} became a label value: {:?}",
                    s.labels
                );
            }
        }
    }
    let inf = prometheus
        .query(r#"sum(http_server_request_duration_seconds_bucket{le="+Inf"})"#)
        .unwrap();
    assert_eq!(inf[0].value, total as f64);
}
