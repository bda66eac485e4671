//! `install` with the `metrics` bridge: the bridge becomes the
//! process's `metrics` recorder, so the plain macros (the application's and
//! any dependency's) reach the same export as the gym instruments, and the
//! guard's shutdown flushes them. (Global state: its own test binary.)

use crate::support::otlp_json::{point, resource_attribute, u64_of};
use crate::support::SharedBuf;
use gym_metrics_api::Role;
use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use serde_json::Value;

#[test]
fn install_makes_the_bridge_the_processs_metrics_recorder() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let out = SharedBuf::default();
    let guard = OtelBuilder::new()
        .role(Role::server("math-0", "resources"))
        .exporter(MetricsExporter::Console)
        .console_writer(out.clone())
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .install()
        .unwrap();
    assert!(guard.metrics_recorder().is_some());
    assert!(gym_metrics_api::role().is_some(), "ours installed too");
    gym_metrics_api::record_verify_ms(40.0, true);
    metrics::counter!("jobs.done", "queue" => "fast").increment(3);
    // A second install of anything fails, and leaves the first in place.
    assert!(OtelBuilder::new()
        .exporter(MetricsExporter::None)
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .install()
        .is_err());
    metrics::counter!("jobs.done", "queue" => "fast").increment(1);
    guard.shutdown().unwrap();

    let text = out.text();
    let doc: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let done = point(&doc, "jobs.done", "sum");
    assert_eq!(u64_of(&done["asInt"]), 4);
    assert_eq!(done["attributes"][0]["key"], "queue");
    assert!(point(&doc, "gym.verify.completed", "sum").is_object());
    assert_eq!(
        resource_attribute(&doc, "service.name").as_deref(),
        Some("nemo-gym/math-0")
    );
}
