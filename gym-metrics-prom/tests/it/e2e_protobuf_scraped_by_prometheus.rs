//! e2e: one real Prometheus scrapes the same endpoint twice, as protobuf
//! (`scrape_protocols: [PrometheusProto]`, job `proto`) and as the 0.0.4
//! text (job `text`), and stores the same series with the same values:
//! every source of families (ours, the process's, the `metrics` bridge's,
//! an application registry's) in both, the native histograms beside them
//! from protobuf only (ours and the bridge's: the `prometheus` crate keeps
//! classic buckets only). And a Prometheus with native histograms on stores
//! both kinds for every histogram family, and both answer quantiles.
//! (Global state: each test in its own process.)

use std::collections::BTreeMap;
use std::time::Duration;

use gym_metrics_api::{HttpMethod, HttpServerRequest, Role, UrlScheme};
use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_prom::{PrometheusBuilder, PROTOBUF_CONTENT_TYPE};
use gym_testkit::{http_get, require, Prometheus, Tool};

/// Every stored float series of `job` but Prometheus' own (`up`,
/// `scrape_*`): its labels without `job` (`le` as a number: Prometheus 2
/// spells a protobuf bound as a float, `100.0`, where the text says `100`),
/// and its value (`None` for the process's, which change from one scrape
/// to the next). Also the names of the native histograms stored.
type Stored = BTreeMap<Vec<(String, String)>, Option<f64>>;

fn stored(prometheus: &Prometheus, job: &str) -> (Stored, Vec<String>) {
    let query = format!(r#"{{job="{job}", __name__!~"up|scrape_.*"}}"#);
    let samples = prometheus.query(&query).unwrap();
    // A native histogram is a series named as its family, beside `_count`.
    let names: std::collections::BTreeSet<String> = samples
        .iter()
        .map(|s| s.labels["__name__"].clone())
        .collect();
    let native: Vec<String> = (names.iter())
        .filter(|n| names.contains(&format!("{n}_count")))
        .cloned()
        .collect();
    let floats = samples
        .into_iter()
        .filter(|s| !native.contains(&s.labels["__name__"]))
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
        .collect();
    (floats, native)
}

/// One `POST /verify` answered 200 in 40 ms.
fn verify_request() -> HttpServerRequest {
    let ms_40 = Duration::from_millis(40);
    HttpServerRequest::new(
        HttpMethod::Post,
        Some("/verify"),
        UrlScheme::Http,
        Some(200),
        ms_40,
    )
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
        .with_old_http_server_duration()
        .install()
        .unwrap();
    for ms in [120, 3400, 45000] {
        gym_metrics_api::record_rollout_duration(Duration::from_millis(ms));
    }
    gym_metrics_api::record_verify(Duration::from_millis(250), true);
    gym_metrics_api::record_verify(Duration::from_millis(8000), false);
    gym_metrics_api::record_http_server_request(&verify_request());
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
             scrape_classic_histograms: true\n    static_configs:\n      - targets: ['{}']\n",
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

    let ((proto, native), (text, none)) =
        (stored(&prometheus, "proto"), stored(&prometheus, "text"));
    assert_eq!(proto, text);
    assert_eq!(
        native,
        [
            "gym_rollout_duration_ms_milliseconds",
            "gym_verify_duration_ms_milliseconds",
            "http_server_request_duration_seconds",
            "sandbox_start",
        ]
    );
    assert!(none.is_empty(), "{none:?}");
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
        "http_server_duration_milliseconds_bucket",
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
    // The old HTTP family: the 40 ms request in le="50", none in le="0",
    // its sum in milliseconds, and no native histogram (listed above).
    let old = |job: &str, series: &str, le: &str| {
        let query = format!(
            r#"http_server_duration_milliseconds_{series}{{job="{job}", http_target="/verify"{le}}}"#
        );
        prometheus.query(&query).unwrap()[0].value
    };
    for job in ["proto", "text"] {
        // Protobuf spells a bound as a float (`50.0`), the text as written.
        let le = |bound: &str| old(job, "bucket", &format!(r#", le=~"{bound}(\\.0)?""#));
        assert_eq!((le("0"), le("25"), le("50")), (0.0, 0.0, 1.0), "{job}");
        assert!((old(job, "sum", "") - 40.0).abs() < 1e-9, "{job}");
    }
    guard.shutdown().expect("the endpoint stops cleanly");
}

#[test]
fn prometheus_with_native_histograms_stores_native_and_classic_series() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let guard = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    // 1,000 rollouts from 10 ms to about an hour, evenly spread in log scale.
    let rollouts: Vec<f64> = (0..1000)
        .map(|i| 10.0 * (360_000f64).powf(f64::from(i) / 999.0))
        .collect();
    for &ms in &rollouts {
        gym_metrics_api::record_rollout_duration_ms(ms);
    }
    gym_metrics_api::record_verify(Duration::from_millis(250), true);
    gym_metrics_api::record_http_server_request(&verify_request());

    let prometheus = Prometheus::start_native(&guard.local_addr().to_string()).unwrap();
    let rollout = "gym_rollout_duration_ms_milliseconds";
    prometheus
        .wait_for(
            &format!("histogram_count({rollout})"),
            Duration::from_secs(15),
            |s| s.len() == 1,
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));

    // Every histogram family is stored native, with its count and sum.
    for (family, count) in [
        (rollout, 1000.0),
        ("gym_verify_duration_ms_milliseconds", 1.0),
        ("http_server_request_duration_seconds", 1.0),
    ] {
        assert_eq!(
            prometheus
                .value(&format!("histogram_count({family})"))
                .unwrap(),
            count,
            "{family}"
        );
        // And classic, beside it.
        assert_eq!(
            prometheus.value(&format!("{family}_count")).unwrap(),
            count,
            "{family}"
        );
    }
    let sum: f64 = rollouts.iter().sum();
    let stored = prometheus
        .value(&format!("histogram_sum({rollout})"))
        .unwrap();
    assert!((stored - sum).abs() < 1e-6 * sum, "{stored} vs {sum}");

    // Both answer a quantile; the native one within its bucket width (9 %).
    let mut sorted = rollouts.clone();
    sorted.sort_by(f64::total_cmp);
    for q in [0.5, 0.95, 0.99] {
        let exact = sorted[(q * 1000.0) as usize - 1];
        let native = prometheus
            .value(&format!("histogram_quantile({q}, {rollout})"))
            .unwrap();
        let classic = prometheus
            .value(&format!("histogram_quantile({q}, {rollout}_bucket)"))
            .unwrap();
        assert!(
            (native / exact - 1.0).abs() < 0.1,
            "p{q}: native {native} vs {exact}"
        );
        assert!(
            classic.is_finite() && classic > 0.0,
            "p{q}: classic {classic}"
        );
    }
    guard.shutdown().expect("the endpoint stops cleanly");
}
