//! Exposure and lifecycle (RELIABILITY.md, cases 5 and 6), Prometheus backend:
//! the endpoint binds loopback unless told otherwise, serves only `/metrics`,
//! reveals nothing else (no debug pages, no environment, no server banner);
//! after shutdown a recorder used from another thread is a no-op, not a
//! crash. (Global install and process environment: its own test binary.)

use std::time::Duration;

use crate::common::raw_http::exchange;
use gym_metrics_prom::PrometheusBuilder;

/// A value planted in the environment that no answer may ever contain.
const CANARY: &str = "gym-canary-7f3a9c1e";

/// Paths a prober tries first.
const PROBES: &[&str] = &[
    "/",
    "/debug",
    "/debug/pprof",
    "/debug/vars",
    "/env",
    "/environ",
    "/proc/self/environ",
    "/config",
    "/admin",
    "/health",
    "/status",
    "/.env",
    "/metrics/",
    "/metrics/../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/Metrics",
    "/metricsx",
    "//metrics",
    "*",
];

#[test]
fn loopback_by_default_only_metrics_nothing_revealed_and_a_no_op_after_shutdown() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // Unless told otherwise: only the port is set (0 picks a free one), the host is the default.
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::remove_var("OTEL_EXPORTER_PROMETHEUS_HOST");
        std::env::set_var("OTEL_EXPORTER_PROMETHEUS_PORT", "0");
        std::env::set_var("GYM_SECRET_TOKEN", CANARY);
    }
    let guard = PrometheusBuilder::from_env().unwrap().install().unwrap();
    let addr = guard.local_addr();
    assert!(addr.ip().is_loopback(), "bound {addr}, not loopback");

    gym_metrics_api::record_verify_ms(40.0, true);

    let not_found = exchange(addr, "GET", "/nothing-here", &[]).unwrap().body;
    for path in PROBES {
        let r = exchange(addr, "GET", path, &[]).unwrap();
        let body = String::from_utf8_lossy(&r.body);
        // `*` is not a valid origin-form target: hyper may refuse it outright.
        assert!(
            r.status == 404 || (*path == "*" && r.status == 400),
            "{path}: {} {body}",
            r.status
        );
        if r.status == 404 {
            assert_eq!(r.body, not_found, "{path}: a different 404 body");
        }
        assert!(!body.contains(CANARY), "{path} revealed the environment");
        assert!(r.header("server").is_none(), "{path}: a server banner");
    }
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"] {
        let r = exchange(addr, method, "/metrics", &[("Content-Length", "0")]).unwrap();
        assert_eq!(r.status, 405, "{method}");
        assert!(!String::from_utf8_lossy(&r.body).contains(CANARY));
    }
    let r = exchange(addr, "GET", "/metrics", &[]).unwrap();
    assert_eq!(r.status, 200);
    assert!(r.header("server").is_none(), "a server banner");
    let text = String::from_utf8(r.body).unwrap();
    assert!(text.contains("gym_verify_completed_total"), "{text}");
    assert!(
        !text.contains(CANARY),
        "the exposition revealed the environment"
    );

    // After shutdown: the port is closed, and recording from any thread is a
    // harmless no-op for the endpoint (the recorder stays installed, as in `log`).
    let handle = guard.handle();
    guard.shutdown().expect("the endpoint stops cleanly");
    assert!(exchange(addr, "GET", "/metrics", &[]).is_err());
    let recorder_thread = std::thread::spawn(|| {
        for i in 0..10_000u32 {
            gym_metrics_api::record_verify_ms(f64::from(i % 100), i % 2 == 0);
            gym_metrics_api::record_rollout_duration(Duration::from_millis(u64::from(i)));
        }
    });
    assert!(
        recorder_thread.join().is_ok(),
        "recording after shutdown panicked"
    );
    assert!(handle
        .render()
        .contains("gym_verify_completed_total{otel_scope_name=\"gym-metrics\""));
}
