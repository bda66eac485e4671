//! The process families and an application registry's through
//! `install()`'s endpoint: negotiated and gzipped like every family of the
//! exposition. (Global state: its own test binary.)
#![cfg(target_os = "linux")]

use crate::common::exposition::parse;
use crate::common::raw_http::exchange;
use gym_metrics_prom::{PrometheusBuilder, OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};

#[test]
fn the_endpoint_serves_process_and_registry_families_in_both_formats_and_gzip() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let registry = prometheus::Registry::new();
    let depth = prometheus::Gauge::new("queue_depth", "Rollouts waiting.").unwrap();
    registry.register(Box::new(depth.clone())).unwrap();
    depth.set(3.0);
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_process_metrics()
        .with_registry(registry)
        .install()
        .unwrap();
    let addr = guard.local_addr();

    let r = exchange(addr, "GET", "/metrics", &[]).unwrap();
    assert_eq!(r.header("content-type"), Some(TEXT_CONTENT_TYPE));
    let families = parse(&String::from_utf8(r.body).unwrap());
    assert_eq!(families["process_cpu_seconds_total"].kind, "counter");
    assert_eq!(families["process_threads"].kind, "gauge");
    assert_eq!(families["queue_depth"].help, "Rollouts waiting.");
    // The endpoint's own thread is among them.
    let threads = families["process_threads"].samples.values().next().copied();
    assert!(threads.unwrap() >= 2.0, "{threads:?}");

    let r = exchange(
        addr,
        "GET",
        "/metrics",
        &[
            ("Accept", "application/openmetrics-text;version=1.0.0"),
            ("Accept-Encoding", "gzip"),
        ],
    )
    .unwrap();
    assert_eq!(r.header("content-type"), Some(OPENMETRICS_CONTENT_TYPE));
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let om = r.gunzipped_body();
    assert!(
        om.contains("# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total "),
        "{om}"
    );
    assert!(om.contains("\nprocess_resident_memory_bytes "), "{om}");
    assert!(
        om.ends_with("# TYPE queue_depth gauge\nqueue_depth 3\n# EOF\n"),
        "{om}"
    );
    guard.shutdown().unwrap();
}
