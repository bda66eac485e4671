//! Exporter `none` still declares the role, as every backend does: the
//! facade knows the process's role, the orchestrator gets its fleet-size
//! capability, and a second install is refused (global state: its own test
//! binary).

use gym_metrics_api::backend::NoopRecorder;
use gym_metrics_api::Role;
use gym_metrics_otel::{BuildError, MetricsExporter, OtelBuilder};

#[test]
fn exporter_none_declares_the_role_and_exports_nothing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let guard = OtelBuilder::new()
        .role(Role::orchestrator())
        .exporter(MetricsExporter::None)
        .install()
        .unwrap();
    assert!(gym_metrics_api::role().is_some_and(Role::is_orchestrator));
    guard.fleet_size().expect("an orchestrator install").set(3);
    gym_metrics_api::record_verify(std::time::Duration::from_millis(5), true);
    // Nothing runs that could fail: no exporter, no final export.
    guard.force_flush().unwrap();
    guard.shutdown().unwrap();
    // The facade is taken, as after any install.
    assert!(gym_metrics_api::install(NoopRecorder::new(Role::orchestrator())).is_err());
    let again = OtelBuilder::new().exporter(MetricsExporter::None).install();
    assert!(
        matches!(again, Err(BuildError::AlreadyInstalled)),
        "{again:?}"
    );
}
