//! Start-up errors (RELIABILITY.md, case 1): a port in use, a port without
//! permission and an address not on this host are clear errors naming the address, and install
//! nothing; each says what to do about its own cause.
//!
//! As root any port binds, so the permission case runs this very test binary
//! again as the unprivileged user 65534 through `setpriv`, where binding a
//! port below `net.ipv4.ip_unprivileged_port_start` really fails (EACCES).

use std::process::Command;

use gym_metrics_prom::{BuildError, PrometheusBuilder};

/// The child's marker: when set, the child test binds `PRIVILEGED_PORT`.
const CHILD_VAR: &str = "GYM_RELIABILITY_BIND_CHILD";
/// A port below 1024 that nothing here listens on.
const PRIVILEGED_PORT: u16 = 1;

fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

fn unprivileged_port_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1024)
}

/// Binds the privileged port; the error text, or "bound" if it bound.
fn try_privileged_bind() -> String {
    match PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], PRIVILEGED_PORT))
        .install()
    {
        Ok(_) => "bound".to_string(),
        Err(e) => {
            assert!(matches!(e, BuildError::Bind { .. }), "{e:?}");
            assert!(
                gym_metrics_api::role().is_none(),
                "nothing may be installed"
            );
            e.to_string()
        }
    }
}

/// Runs in the unprivileged child only (a no-op in the parent's run).
#[test]
fn child_binds_a_privileged_port() {
    if std::env::var_os(CHILD_VAR).is_some() {
        println!("CHILD-RESULT: {}", try_privileged_bind());
    }
}

#[test]
fn a_port_without_permission_is_an_error_naming_the_address() {
    if gym_testkit::ran_in_child() {
        return;
    }
    if unprivileged_port_start() <= PRIVILEGED_PORT {
        eprintln!(
            "skipped: every port is unprivileged on this host (ip_unprivileged_port_start = 0)"
        );
        return;
    }
    let message = if effective_uid() == Some(0) {
        let exe = std::env::current_exe().unwrap();
        let output = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(exe)
            .args([
                "--exact",
                "bind_errors::child_binds_a_privileged_port",
                "--nocapture",
            ])
            .env(CHILD_VAR, "1")
            .output()
            .expect("setpriv (util-linux) drops root for this test: install util-linux");
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(
            output.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("CHILD-RESULT: "))
            .unwrap_or_else(|| panic!("the child said nothing: {stdout}"))
            .to_string()
    } else {
        try_privileged_bind()
    };
    assert!(
        message.contains(&format!("cannot listen on 127.0.0.1:{PRIVILEGED_PORT}")),
        "{message}"
    );
    assert!(message.contains("Permission denied"), "{message}");
    assert!(
        message.contains("choose a port of 1024 or above"),
        "{message}"
    );
}

#[test]
fn an_address_not_on_this_host_is_an_error_naming_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // 192.0.2.1 (TEST-NET-1) is on no interface here: EADDRNOTAVAIL, not EACCES.
    let e = PrometheusBuilder::new()
        .with_http_listener(([192, 0, 2, 1], 9464))
        .install()
        .unwrap_err();
    assert!(matches!(e, BuildError::Bind { .. }), "{e:?}");
    let message = e.to_string();
    assert!(
        message.contains("cannot listen on 192.0.2.1:9464"),
        "{message}"
    );
    assert!(
        message.contains("Cannot assign requested address"),
        "{message}"
    );
    assert!(message.contains("not on this host"), "{message}");
    assert!(
        gym_metrics_api::role().is_none(),
        "nothing may be installed"
    );
}

#[test]
fn a_port_in_use_says_what_to_do_about_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let e = PrometheusBuilder::new()
        .with_http_listener(addr)
        .install()
        .unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains(&format!("cannot listen on {addr}")),
        "{message}"
    );
    assert!(message.contains("stop the process holding it"), "{message}");
}
