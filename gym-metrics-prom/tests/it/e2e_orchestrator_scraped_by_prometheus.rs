//! e2e: a real Prometheus on loopback scrapes our endpoint every second (in
//! OpenMetrics only, so that path is the one proven here; the server-role test
//! scrapes the 0.0.4 text), and its query API returns exactly what the
//! orchestrator recorded. (Global state: its own test binary.)

use std::collections::BTreeMap;
use std::time::Duration;

use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{require, Prometheus, Sample, Tool};

const ROLLOUTS_MS: [u64; 3] = [120, 3400, 45000];
const VERIFICATIONS: [(u64, bool); 4] = [(40, true), (250, true), (1200, true), (8000, false)];
const WAIT: Duration = Duration::from_secs(15);

/// Cumulative count per `le` (as a number; `+Inf` included).
fn buckets(samples: &[Sample]) -> BTreeMap<u64, f64> {
    samples
        .iter()
        .map(|s| {
            let le: f64 = match s.labels["le"].as_str() {
                "+Inf" => f64::INFINITY,
                le => le.parse().unwrap(),
            };
            // f64 keys are not Ord; the bounds are whole milliseconds or +Inf.
            let key = if le.is_infinite() {
                u64::MAX
            } else {
                le as u64
            };
            (key, s.value)
        })
        .collect()
}

/// The cumulative counts a correct histogram has for `values` (the oracle).
fn expected_buckets(values: &[u64]) -> BTreeMap<u64, f64> {
    let mut expected: BTreeMap<u64, f64> = Instrument::DEFAULT_DURATION_BOUNDARIES_MS
        .iter()
        .map(|&b| {
            (
                b as u64,
                values.iter().filter(|&&v| v as f64 <= b).count() as f64,
            )
        })
        .collect();
    expected.insert(u64::MAX, values.len() as f64);
    expected
}

#[test]
fn prometheus_sees_what_the_orchestrator_recorded() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let guard = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    for ms in ROLLOUTS_MS {
        gym_metrics_api::record_rollout_duration(Duration::from_millis(ms));
    }
    for (ms, ok) in VERIFICATIONS {
        gym_metrics_api::record_verify(Duration::from_millis(ms), ok);
    }
    guard.fleet_size().expect("orchestrator").set(4);

    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  scrape_protocols: [OpenMetricsText1.0.0]\n\
         scrape_configs:\n  - job_name: gym\n    static_configs:\n      - targets: ['{}']\n",
        guard.local_addr()
    );
    let prometheus = Prometheus::start_with_config(&config).unwrap();
    prometheus
        .wait_for("gym_verify_completed_total", WAIT, |s| s.len() == 1)
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));

    let rollout = "gym_rollout_duration_ms_milliseconds";
    assert_eq!(prometheus.value(&format!("{rollout}_count")).unwrap(), 3.0);
    assert_eq!(
        prometheus.value(&format!("{rollout}_sum")).unwrap(),
        48520.0
    );
    let got = buckets(&prometheus.query(&format!("{rollout}_bucket")).unwrap());
    assert_eq!(got, expected_buckets(&ROLLOUTS_MS));
    assert_eq!(
        (got[&100], got[&250], got[&5000], got[&60000]),
        (0.0, 1.0, 2.0, 3.0)
    );

    let verify = "gym_verify_duration_ms_milliseconds";
    let verify_ms: Vec<u64> = VERIFICATIONS.iter().map(|(ms, _)| *ms).collect();
    assert_eq!(prometheus.value(&format!("{verify}_count")).unwrap(), 4.0);
    assert_eq!(prometheus.value(&format!("{verify}_sum")).unwrap(), 9490.0);
    let got = buckets(&prometheus.query(&format!("{verify}_bucket")).unwrap());
    assert_eq!(got, expected_buckets(&verify_ms));
    assert_eq!(
        (got[&100], got[&1000], got[&2500], got[&10000]),
        (1.0, 2.0, 3.0, 4.0)
    );

    assert_eq!(prometheus.value("gym_verify_success_rate").unwrap(), 0.75);
    assert_eq!(prometheus.value("gym_verify_completed_total").unwrap(), 4.0);
    assert_eq!(prometheus.value("gym_verify_succeeded_total").unwrap(), 3.0);
    assert_eq!(prometheus.value("gym_servers_active").unwrap(), 4.0);

    // Every gym series carries the scope labels; target_info carries the resource.
    let scoped = prometheus
        .query(r#"{__name__=~"gym_.*", otel_scope_name!="gym-metrics"}"#)
        .unwrap();
    assert!(scoped.is_empty(), "{scoped:?}");
    let info = prometheus.query("target_info").unwrap();
    assert_eq!(info.len(), 1, "{info:?}");
    assert_eq!(info[0].labels["service_name"], "nemo-gym/orchestrator");
    assert_eq!(info[0].labels["gym_role"], "orchestrator");
    assert_eq!(info[0].labels["telemetry_sdk_name"], "opentelemetry");
    assert!(!info[0].labels["service_instance_id"].is_empty());

    drop(prometheus);
    guard.shutdown().expect("the endpoint stops cleanly");
}
