//! Exporter `none` installs nothing (global state: its own test binary).

use gym_metrics_api::backend::NoopRecorder;
use gym_metrics_api::Role;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};

#[test]
fn exporter_none_leaves_the_facade_free() {
    let guard = OtelBuilder::new()
        .role(Role::orchestrator())
        .exporter(MetricsExporter::None)
        .install()
        .unwrap();
    assert!(!gym_metrics_api::enabled());
    assert!(guard.fleet_size().is_none());
    guard.shutdown().unwrap();
    // The facade is still free for another backend.
    assert!(gym_metrics_api::install(NoopRecorder::new(Role::orchestrator())).is_ok());
}
