//! The installed orchestrator's real endpoint serves what its FleetSize
//! capability publishes at `GET /sd`, and a final-scrape wait is not ended
//! by an SD request. (Global state: its own test binary.)

use std::time::Duration;

use crate::common::raw_http::exchange;
use gym_metrics_api::{FleetTarget, Role};
use gym_metrics_prom::{PrometheusBuilder, ShutdownError};

#[test]
fn the_orchestrator_endpoint_serves_the_published_fleet() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let guard = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .final_scrape_wait(Duration::from_millis(600))
        .install()
        .unwrap();
    let addr = guard.local_addr();
    let fleet = guard.fleet_size().expect("orchestrator");

    let r = exchange(addr, "GET", "/sd", &[]).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, b"[]");

    let targets: Vec<FleetTarget> = (0..3)
        .map(|i| {
            FleetTarget::of_process(
                format!("127.0.0.1:{}", 9101 + i),
                &Role::server(format!("resources-{i}"), "resources"),
                Some("run-\"42\""),
            )
            .unwrap()
        })
        .collect();
    fleet.publish_targets(&targets);
    let r = exchange(addr, "GET", "/sd", &[]).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let groups = doc.as_array().unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[1]["targets"][0], "127.0.0.1:9102");
    assert_eq!(groups[1]["labels"]["nemo_gym_server_name"], "resources-1");
    assert_eq!(groups[1]["labels"]["nemo_run_id"], "run-\"42\"");

    // One target gone: the whole list is served again, without it.
    fleet.publish_targets(&targets[..2]);
    let r = exchange(addr, "GET", "/sd", &[]).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), 2);

    // Reading /sd during the final-scrape wait is no final scrape.
    let sd_reader = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        exchange(addr, "GET", "/sd", &[]).map(|r| r.status)
    });
    let outcome = guard.shutdown();
    assert_eq!(sd_reader.join().unwrap().unwrap(), 200);
    assert!(
        matches!(outcome, Err(ShutdownError::FinalScrapeMissed { .. })),
        "{outcome:?}"
    );
}
