//! A port in use is a start-up error naming the address, and nothing is
//! installed. (Would touch global state on success: its own test binary.)

use std::net::TcpListener;

use gym_metrics_prom::{BuildError, PrometheusBuilder};

#[test]
fn a_taken_port_is_an_error_naming_the_address_and_installs_nothing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let e = PrometheusBuilder::new()
        .with_http_listener(addr)
        .install()
        .unwrap_err();
    assert!(matches!(e, BuildError::Bind { .. }), "{e:?}");
    assert!(e.to_string().contains(&addr.to_string()), "{e}");
    assert!(
        gym_metrics_api::role().is_none(),
        "nothing may be installed"
    );
    assert!(!gym_metrics_api::enabled());
}
