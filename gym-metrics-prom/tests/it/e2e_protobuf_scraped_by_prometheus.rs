//! e2e: one real Prometheus scrapes the same endpoint twice, as protobuf
//! (`scrape_protocols: [PrometheusProto]`, job `proto`) and as the 0.0.4
//! text (job `text`), and stores the same series with the same values:
//! every source of families (ours, the process's, the `metrics` bridge's,
//! an application registry's) in both. (Global state: its own process.)

use std::collections::BTreeMap;
use std::time::Duration;

use gym_metrics_api::{HttpMethod, HttpServerRequest, Role, UrlScheme};
use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_prom::{PrometheusBuilder, PROTOBUF_CONTENT_TYPE};
use gym_testkit::{http_get, require, Prometheus, Tool};

/// Every stored series of `job` but Prometheus' own (`up`, `scrape_*`): its
/// labels without `job` (`le` as a number: Prometheus 2 spells a protobuf
/// bound as a float, `100.0`, where the text says `100`), and its value
/// (`None` for the process's, which change from one scrape to the next).
fn stored(prometheus: &Prometheus, job: &str) -> BTreeMap<Vec<(String, String)>, Option<f64>> {
    let query = format!(r#"{{job="{job}", __name__!~"up|scrape_.*"}}"#);
    let samples = prometheus.query(&query).unwrap();
    samples
        .into_iter()
        .map(|s| {
            let process = s.labels["__name__"].starts_with("process_");
            let labels = s.labels.into_iter().filter(|(k, _)| k != "job");
            let le = |(k, v): (String, String)| match v.parse::<f64>() {
                Ok(bound) if k == "le" => (k, bound.to_string()),
                _ => (k, v),
            };
            let labels = labels.map(le).collect();
            (labels, (!process).then_some(s.value))
        })
        .collect()
}

#[test]
fn prometheus_stores_the_same_series_from_protobuf_as_from_text() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let registry = prometheus::Registry::new();
    let jobs = prometheus::IntCounterVec::new(
        prometheus::Opts::new("sandbox_jobs_total", "Sandbox jobs."),
        &["provider"],
    )
    .unwrap();
    registry.register(Box::new(jobs.clone())).unwrap();
    let guard = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_process_metrics()
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .with_registry(registry)
        .install()
        .unwrap();
    for ms in [120, 3400, 45000] {
        gym_metrics_api::record_rollout_duration(Duration::from_millis(ms));
    }
    gym_metrics_api::record_verify(Duration::from_millis(250), true);
    gym_metrics_api::record_verify(Duration::from_millis(8000), false);
    gym_metrics_api::record_http_server_request(&HttpServerRequest::new(
        HttpMethod::Post,
        Some("/verify"),
        UrlScheme::Http,
        Some(200),
        Duration::from_millis(40),
    ));
    guard.fleet_size().expect("orchestrator").set(4);
    metrics::counter!("verify.outcome", "reason" => "ok").increment(2);
    metrics::gauge!("queue.depth").set(4.5);
    metrics::histogram!("sandbox.start", "provider" => "docker").record(0.7);
    jobs.with_label_values(&["k8s"]).inc_by(3);

    // What Prometheus asks for in the `proto` job gets protobuf.
    let url = format!("http://{}/metrics", guard.local_addr());
    let accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,*/*;q=0.1";
    let (status, headers, _) = http_get(&url, &[("Accept", accept)]).unwrap();
    assert_eq!(status, 200);
    let content_type = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    assert_eq!(
        content_type.map(|(_, v)| v.as_str()),
        Some(PROTOBUF_CONTENT_TYPE)
    );

    let job = |name: &str, protocol: &str| {
        format!(
            "  - job_name: {name}\n    scrape_protocols: [{protocol}]\n    \
             static_configs:\n      - targets: ['{}']\n",
            guard.local_addr()
        )
    };
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{}{}",
        job("proto", "PrometheusProto"),
        job("text", "PrometheusText0.0.4"),
    );
    let prometheus = Prometheus::start_with_config(&config).unwrap();
    prometheus
        .wait_for("sandbox_jobs_total", Duration::from_secs(15), |s| {
            s.len() == 2
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));

    let (proto, text) = (stored(&prometheus, "proto"), stored(&prometheus, "text"));
    assert_eq!(proto, text);
    let names: std::collections::BTreeSet<&str> = proto
        .keys()
        .filter_map(|labels| labels.iter().find(|(k, _)| k == "__name__"))
        .map(|(_, v)| v.as_str())
        .collect();
    for name in [
        "gym_rollout_duration_ms_milliseconds_bucket",
        "gym_servers_active",
        "gym_verify_completed_total",
        "gym_verify_success_rate",
        "http_server_request_duration_seconds_count",
        "process_resident_memory_bytes",
        "queue_depth",
        "sandbox_jobs_total",
        "sandbox_start_bucket",
        "target_info",
        "verify_outcome_total",
    ] {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    // The spelling shows which format each job's scrapes were parsed from.
    let rollouts = |job: &str, le: &str| {
        let bucket =
            format!(r#"gym_rollout_duration_ms_milliseconds_bucket{{job="{job}", le="{le}"}}"#);
        prometheus.query(&bucket).unwrap()[0].value
    };
    assert_eq!(
        (rollouts("proto", "5000.0"), rollouts("text", "5000")),
        (2.0, 2.0)
    );
    guard.shutdown().expect("the endpoint stops cleanly");
}
