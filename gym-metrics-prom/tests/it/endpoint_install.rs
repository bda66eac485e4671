//! `install()`: the facade records into our recorder and a real hyper listener
//! serves it; shutdown frees the port. (Global state: its own test binary.)

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::common::exposition::parse;
use crate::common::raw_http::exchange;
use gym_metrics_api::Role;
use gym_metrics_prom::{PrometheusBuilder, OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};

#[test]
fn install_serves_metrics_negotiates_and_frees_the_port_on_shutdown() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let guard = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    let addr = guard.local_addr();
    assert_ne!(addr.port(), 0);

    // Through the facade, as application code records.
    gym_metrics_api::record_rollout_duration(Duration::from_millis(3400));
    gym_metrics_api::record_verify_ms(40.0, true);
    gym_metrics_api::record_verify_ms(8000.0, false);
    guard.fleet_size().expect("orchestrator").set(4);
    assert!(gym_metrics_api::record_active_servers(5).is_ok());

    // Text 0.0.4 by default.
    let r = exchange(addr, "GET", "/metrics", &[]).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some(TEXT_CONTENT_TYPE));
    let text = String::from_utf8(r.body).unwrap();
    assert_eq!(text, guard.handle().render());
    let families = parse(&text);
    let servers = &families["gym_servers_active"];
    assert_eq!(servers.samples.values().copied().collect::<Vec<_>>(), [5.0]);
    let rate = &families["gym_verify_success_rate"];
    assert_eq!(rate.samples.values().copied().collect::<Vec<_>>(), [0.5]);

    // OpenMetrics when asked, gzip when accepted.
    let r = exchange(
        addr,
        "GET",
        "/metrics",
        &[
            (
                "Accept",
                "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;q=0.2",
            ),
            ("Accept-Encoding", "gzip"),
        ],
    )
    .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some(OPENMETRICS_CONTENT_TYPE));
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let om = r.gunzipped_body();
    assert!(om.contains("# TYPE gym_verify_completed counter\n"), "{om}");
    assert!(om.contains("\ngym_verify_completed_total{"), "{om}");
    assert!(om.ends_with("# EOF\n"), "{om}");

    // HEAD: the GET's headers, no body.
    let r = exchange(addr, "HEAD", "/metrics", &[]).unwrap();
    assert_eq!(r.status, 200);
    let length: usize = r.header("content-length").unwrap().parse().unwrap();
    assert_eq!(length, text.len());
    assert!(r.body.is_empty());

    // Other paths 404, other methods 405, with a short body.
    let r = exchange(addr, "GET", "/", &[]).unwrap();
    assert_eq!(r.status, 404);
    assert!(!r.body.is_empty() && r.body.len() < 100);
    let r = exchange(addr, "POST", "/metrics", &[("Content-Length", "0")]).unwrap();
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    assert!(!r.body.is_empty() && r.body.len() < 100);

    // A second install is refused and says why.
    let e = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap_err();
    assert!(e.to_string().contains("already installed"), "{e}");

    // Shutdown stops the listener and frees the port.
    let started = Instant::now();
    guard.shutdown().expect("the endpoint stops cleanly");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(exchange(addr, "GET", "/metrics", &[]).is_err());
    TcpListener::bind(addr).expect("the port is free after shutdown");
}
