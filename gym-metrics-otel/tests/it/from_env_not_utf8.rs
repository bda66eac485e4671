//! A variable whose value is not UTF-8 is a start-up error naming it, as in
//! the Prometheus backend; it used to count as unset, so an endpoint with a
//! stray byte fell back to the default endpoint without a word. (Mutates
//! the environment: its own test binary, one test.)

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use gym_metrics_otel::{OtelBuilder, ENV_VARIABLES};

#[test]
fn a_stray_byte_in_any_variable_is_an_error_naming_it_with_secrets_redacted() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for variable in ENV_VARIABLES {
        // SAFETY: this test has the process to itself (`ran_in_child`), and no
        // other thread of it reads or writes the environment meanwhile.
        unsafe {
            std::env::set_var(variable, OsStr::from_bytes(b"http://collector\xff:4318"));
        }
        let e = OtelBuilder::from_env().unwrap_err();
        assert_eq!(e.variable(), variable);
        let text = e.to_string();
        assert!(text.contains(variable) && text.contains("UTF-8"), "{text}");
        // SAFETY: this test has the process to itself (`ran_in_child`), and no
        // other thread of it reads or writes the environment meanwhile.
        unsafe {
            std::env::remove_var(variable);
        }
    }
    assert!(OtelBuilder::from_env().is_ok());

    let headers = "OTEL_EXPORTER_OTLP_HEADERS";
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var(
            headers,
            OsStr::from_bytes(b"authorization=Bearer s3cret\xff"),
        );
    }
    let e = OtelBuilder::from_env().unwrap_err();
    let printed = format!("{e} / {e:?}");
    assert!(
        printed.contains(headers) && printed.contains("authorization"),
        "{printed}"
    );
    assert!(!printed.contains("s3cret"), "{printed}");
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::remove_var(headers);
    }
}
