//! `from_env` reads the process environment (global state: its own binary).

use gym_metrics_otel::OtelBuilder;

#[test]
fn a_bad_process_variable_is_a_startup_error_naming_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var(
            "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
            "sometimes",
        );
    }
    let err = OtelBuilder::from_env().unwrap_err();
    assert_eq!(
        err.variable(),
        "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
    );
    assert!(err.to_string().contains("\"sometimes\""), "{err}");
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta");
    }
    assert!(OtelBuilder::from_env().is_ok());
}
