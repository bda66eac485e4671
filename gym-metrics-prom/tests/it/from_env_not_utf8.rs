//! A variable whose value is not UTF-8 is a start-up error naming it, as in
//! the OpenTelemetry backend. (Mutates the environment: its own test binary,
//! one test.)

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use gym_metrics_prom::PrometheusBuilder;

#[test]
fn a_stray_byte_in_any_variable_is_an_error_naming_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // OTEL_SERVICE_NAME would parse whatever it held: a lossy read would
    // have exported a service name with U+FFFD in it, silently.
    for variable in ["OTEL_SERVICE_NAME", "OTEL_EXPORTER_PROMETHEUS_HOST"] {
        // SAFETY: this test has the process to itself (`ran_in_child`), and no
        // other thread of it reads or writes the environment meanwhile.
        unsafe {
            std::env::set_var(variable, OsStr::from_bytes(b"lab\xff"));
        }
        let e = PrometheusBuilder::from_env().unwrap_err();
        assert_eq!(e.variable(), variable);
        let text = e.to_string();
        assert!(text.contains(variable) && text.contains("UTF-8"), "{text}");
        // SAFETY: this test has the process to itself (`ran_in_child`), and no
        // other thread of it reads or writes the environment meanwhile.
        unsafe {
            std::env::remove_var(variable);
        }
    }
    assert!(PrometheusBuilder::from_env().is_ok());
}
