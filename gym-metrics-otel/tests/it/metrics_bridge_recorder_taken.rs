//! `install` with the `metrics` bridge when another `metrics`
//! recorder already holds the process's slot: an error naming what
//! happened, as on the Prometheus backend, with the gym-metrics recorder
//! installed all the same. (Global state: its own test binary.)

use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_otel::{BuildError, MetricsExporter, OtelBuilder};

#[test]
fn another_metrics_recorder_is_an_install_error_saying_so() {
    if gym_testkit::ran_in_child() {
        return;
    }
    metrics::set_global_recorder(metrics::NoopRecorder).unwrap();
    let err = OtelBuilder::new()
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .install()
        .unwrap_err();
    assert!(matches!(err, BuildError::MetricsRecorderTaken), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("another `metrics` recorder is already installed")
            && message.contains("with_metrics_bridge()"),
        "{message}"
    );
    assert!(
        gym_metrics_api::role().is_some(),
        "ours installed all the same"
    );
}
