//! e2e: a real Prometheus (2.53) scrapes `/metrics` over https, trusting a
//! private CA the test made, with basic auth, and the gym series arrive; a
//! second job with a wrong password sees the target down with a 401.
//! (Global install: its own binary.)

#![cfg(feature = "web-config")]

use std::time::{Duration, Instant};

use crate::common::pki::{hash, TestCa, TestDir};
use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{http_get, require, Prometheus, Tool};

const USER: &str = "prometheus";
const PASSWORD: &str = "scrape-me-please";

/// Prometheus's `/api/v1/targets` entry for `job`: (health, lastError).
fn target(prometheus: &Prometheus, job: &str) -> Option<(String, String)> {
    let (status, _, body) = http_get(&format!("{}/api/v1/targets", prometheus.url()), &[]).ok()?;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_slice(&body).ok()?;
    json["data"]["activeTargets"]
        .as_array()?
        .iter()
        .find(|t| t["labels"]["job"] == job)
        .map(|t| {
            (
                t["health"].as_str().unwrap_or_default().to_string(),
                t["lastError"].as_str().unwrap_or_default().to_string(),
            )
        })
}

#[test]
fn prometheus_scrapes_over_https_with_basic_auth_and_a_wrong_password_is_a_401() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let dir = TestDir::new("e2e-tls-basic-auth");
    let ca = TestCa::new("gym e2e CA");
    let (cert, key) = ca.server_cert();
    dir.write("server.crt", &cert);
    dir.write("server.key", &key);
    let ca_file = dir.write("ca.crt", &ca.pem);
    let web = dir.write(
        "web.yml",
        &format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  {USER}: '{}'\n",
            hash(PASSWORD)
        ),
    );
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-verifier-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .web_config_file(&web)
        .install()
        .unwrap();
    for ok in [true, true, false] {
        gym_metrics_api::record_verify(Duration::from_millis(250), ok);
    }
    gym_metrics_api::record_rollout_duration(Duration::from_millis(3400));

    let job = |name: &str, password: &str| {
        format!(
            "  - job_name: {name}\n    scheme: https\n    tls_config:\n      ca_file: {}\n\
             \x20   basic_auth:\n      username: {USER}\n      password: {password}\n\
             \x20   static_configs:\n      - targets: ['{}']\n",
            ca_file.display(),
            guard.local_addr()
        )
    };
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{}{}",
        job("gym", PASSWORD),
        job("gym-wrong-password", "not-the-password")
    );
    let prometheus = Prometheus::start_with_config(&config).unwrap();
    let started = Instant::now();
    let completed = prometheus
        .wait_for(
            r#"gym_verify_completed_total{job="gym"}"#,
            Duration::from_secs(20),
            |s| s.len() == 1,
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    let arrived = started.elapsed();
    assert_eq!(completed[0].value, 3.0);
    let succeeded = prometheus
        .query(r#"gym_verify_succeeded_total{job="gym"}"#)
        .unwrap();
    assert_eq!(succeeded[0].value, 2.0);
    let rollouts = prometheus
        .query(r#"gym_rollout_duration_ms_milliseconds_count{job="gym"}"#)
        .unwrap();
    assert_eq!(rollouts[0].value, 1.0);
    assert_eq!(prometheus.query(r#"up{job="gym"}"#).unwrap()[0].value, 1.0);

    // The wrong password: target down, 401 in its last error, no gym series.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (health, last_error) = loop {
        match target(&prometheus, "gym-wrong-password") {
            Some((health, error)) if health == "down" => break (health, error),
            seen if Instant::now() > deadline => {
                panic!(
                    "the wrong-password target never went down: {seen:?}\n{}",
                    prometheus.log_tail()
                )
            }
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    assert_eq!(health, "down");
    assert!(last_error.contains("401"), "{last_error}");
    assert_eq!(
        prometheus.query(r#"up{job="gym-wrong-password"}"#).unwrap()[0].value,
        0.0
    );
    assert!(prometheus
        .query(r#"{job="gym-wrong-password", __name__=~"gym_.*"}"#)
        .unwrap()
        .is_empty());
    let stats = guard.endpoint_stats();
    assert!(stats.auth_refusals >= 1, "{stats:?}");
    eprintln!(
        "e2e: gym series arrived {arrived:?} after Prometheus started; wrong-password target: {health}, {last_error:?}; {stats:?}"
    );
    drop(prometheus);
    guard.shutdown().unwrap();
}
