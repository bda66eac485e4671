//! e2e: a server-role process's scrape carries no `gym_servers_active`
//! series at all, even when server code tries to write it. Prometheus scrapes
//! the 0.0.4 text only here. (Global state: its own test binary.)

use std::time::Duration;

use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{require, Prometheus, Tool};

#[test]
fn a_server_exports_no_fleet_size() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-verifier-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    assert!(guard.fleet_size().is_none());
    let refused = gym_metrics_api::record_active_servers(4).unwrap_err();
    assert!(refused.to_string().contains("math-verifier-0"), "{refused}");
    gym_metrics_api::record_verify(Duration::from_millis(250), true);

    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  scrape_protocols: [PrometheusText0.0.4]\n\
         scrape_configs:\n  - job_name: gym\n    static_configs:\n      - targets: ['{}']\n",
        guard.local_addr()
    );
    let prometheus = Prometheus::start_with_config(&config).unwrap();
    let completed = prometheus
        .wait_for("gym_verify_completed_total", Duration::from_secs(15), |s| {
            s.len() == 1
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    assert_eq!(completed[0].value, 1.0);
    // The scrape that carried the counter carried everything this process has.
    assert!(prometheus.query("gym_servers_active").unwrap().is_empty());
    let names = prometheus
        .query(r#"count by (__name__) ({__name__=~"gym_.*"})"#)
        .unwrap();
    assert!(!names.is_empty());
    assert!(
        names
            .iter()
            .all(|s| s.labels["__name__"] != "gym_servers_active"),
        "{names:?}"
    );
    let info = prometheus.query("target_info").unwrap();
    assert_eq!(info[0].labels["nemo_gym_server_name"], "math-verifier-0");
    assert_eq!(info[0].labels["nemo_gym_server_type"], "resources");
}
