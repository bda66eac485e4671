//! Installing into the facade (global state: its own test binary).

use std::time::Duration;

use crate::support::otlp_json::*;
use crate::support::*;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::{BuildError, MetricsExporter, OtelBuilder};

#[test]
fn install_feeds_the_facade_and_only_once() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let buf = SharedBuf::default();
    let guard = OtelBuilder::new()
        .role(Role::orchestrator())
        .exporter(MetricsExporter::Console)
        .console_writer(buf.clone())
        .install()
        .unwrap();
    assert!(gym_metrics_api::enabled());
    let fleet = guard
        .fleet_size()
        .expect("an orchestrator install yields the fleet size");
    fleet.set(FLEET_SIZE);
    for ms in ROLLOUTS_MS {
        gym_metrics_api::record_rollout_duration_ms(ms);
    }
    for (ms, ok) in VERIFIES {
        gym_metrics_api::record_verify(Duration::from_secs_f64(ms / 1000.0), ok);
    }

    let again = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .install();
    assert!(
        matches!(again, Err(BuildError::AlreadyInstalled)),
        "{again:?}"
    );

    guard.shutdown().unwrap();
    let doc: serde_json::Value = serde_json::from_str(buf.text().lines().last().unwrap()).unwrap();
    let rollouts = point(&doc, Instrument::ROLLOUT_DURATION.name, "histogram");
    assert_eq!(u64_of(&rollouts["count"]), 3);
    assert_eq!(rollouts["sum"].as_f64(), Some(48520.0));
    let verifies = point(&doc, Instrument::VERIFY_DURATION.name, "histogram");
    assert!((verifies["sum"].as_f64().unwrap() - 9490.0).abs() < 1e-6);
    assert_eq!(
        point(&doc, Instrument::VERIFY_SUCCESS_RATE.name, "gauge")["asDouble"].as_f64(),
        Some(0.75)
    );
    assert_eq!(
        u64_of(&point(&doc, Instrument::SERVERS_ACTIVE.name, "gauge")["asInt"]),
        FLEET_SIZE
    );
}
