//! Warnings reach the user: every process of the fleet logs through the
//! examples' logger (RUST_LOG, warnings by default), and the orchestrator
//! prints its children's standard error under their name. One of each kind
//! the libraries and the fleet warn about: a failed accept, a failed OTLP
//! export, a refused fleet-size write.
#![cfg(not(feature = "noop"))]

// Only the fleet runner is used here.
use std::process::Command;
use std::time::Duration;

use crate::support::Fleet;

fn fleet_args(extra: &[&str]) -> Vec<String> {
    ["--servers", "1", "--agents", "1", "--seed", "3"]
        .iter()
        .chain(
            [
                "--generate-ms",
                "20..50",
                "--verify-ms",
                "0..5",
                "--linger",
                "0",
            ]
            .iter(),
        )
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

/// A server of a fleet runs out of file descriptors (the whole fleet under
/// `prlimit --nofile=64:64`, a flood on that server's `/verify`): its warning
/// appears in the orchestrator's output under its name, with RUST_LOG unset.
#[cfg(feature = "prom")]
#[test]
fn a_servers_accept_warning_reaches_the_user_through_the_orchestrator() {
    if gym_testkit::ran_in_child() {
        return;
    }
    use std::net::TcpStream;
    let base = gym_testkit::free_port_block(3).to_string();
    let mut prlimit = Command::new("prlimit");
    prlimit
        .args(["--nofile=64:64", "--"])
        .arg(env!("CARGO_BIN_EXE_gym-fleet"));
    let mut fleet = Fleet::start_command(
        prlimit,
        &fleet_args(&["--duration", "60", "--metrics-port", &base]),
        &[("RUST_LOG", String::new())],
    );
    let listing = fleet
        .wait_line(Duration::from_secs(20), |l| {
            l.trim_start().starts_with("resources-0 ") && l.contains("verify http://")
        })
        .unwrap_or_else(|| panic!("no verify address listed:\n{}", fleet.output()));
    let verify = listing
        .split("verify http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|addr| addr.parse::<std::net::SocketAddr>().ok())
        .unwrap_or_else(|| panic!("unreadable verify address in {listing:?}"));
    let flood: Vec<TcpStream> = (0..80)
        .filter_map(|_| TcpStream::connect_timeout(&verify, Duration::from_secs(2)).ok())
        .collect();
    let expected =
        "resources-0: [WARN  gym_fleet] accepting a /verify connection failed: Too many open files";
    let warning = fleet.wait_line(Duration::from_secs(10), |l| l.starts_with(expected));
    drop(flood);
    crate::support::send_signal(fleet.pid(), "TERM");
    let (_status, output) = fleet.wait(Duration::from_secs(30));
    let warning = warning.unwrap_or_else(|| panic!("no {expected:?} in:\n{output}"));
    eprintln!("as the user sees it:\n{warning}");
    let warnings = output.lines().filter(|l| l.contains("[WARN ")).count();
    assert!(
        warnings <= 3,
        "{warnings} warnings: rate-limited?\n{output}"
    );
    assert!(
        !output.contains("[INFO "),
        "info lines with RUST_LOG unset:\n{output}"
    );
}

/// RUST_LOG sets the level of every process, the children's included, and a
/// value that is not a filter stops the fleet at start-up, naming it.
#[cfg(feature = "prom")]
#[test]
fn rust_log_sets_the_level_of_every_process() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let base = gym_testkit::free_port_block(3);
    let args = fleet_args(&["--duration", "1", "--metrics-port", &base.to_string()]);
    let mut fleet = Fleet::start(&args, &[("RUST_LOG", "gym_metrics=info".to_string())]);
    let (status, output) = fleet.wait(Duration::from_secs(30));
    assert!(status.success(), "{status}\n{output}");
    let serving = |port: u16| {
        format!("[INFO  gym_metrics] serving Prometheus metrics at http://127.0.0.1:{port}/metrics")
    };
    for (who, port) in [
        ("", base),
        ("resources-0: ", base + 1),
        ("agent-0: ", base + 2),
    ] {
        let line = format!("{who}{}", serving(port));
        // The line goes on with the endpoint's connection limit.
        assert!(
            output.lines().any(|l| l.starts_with(&line)),
            "no {line:?} in:\n{output}"
        );
    }

    let mut fleet = Fleet::start(&args, &[("RUST_LOG", "gym_metrics=loud".to_string())]);
    let (status, output) = fleet.wait(Duration::from_secs(10));
    assert_eq!(status.code(), Some(2), "{output}");
    assert!(
        output.starts_with("gym-fleet: RUST_LOG=\"gym_metrics=loud\" is not a log filter"),
        "{output}"
    );
}

/// Every process pushes to a port where nothing listens: the orchestrator's
/// export warning and each child's (under its name) reach the user.
#[cfg(all(feature = "otel", not(feature = "prom")))]
#[test]
fn export_failures_of_every_process_reach_the_user() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let nothing_there = gym_testkit::free_port();
    let env = [
        (
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            format!("http://127.0.0.1:{nothing_there}/v1/metrics"),
        ),
        (
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            "http/protobuf".to_string(),
        ),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200".to_string()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "500".to_string()),
        ("RUST_LOG", String::new()),
    ];
    let mut fleet = Fleet::start(&fleet_args(&["--duration", "2"]), &env);
    let (_status, output) = fleet.wait(Duration::from_secs(30));
    for who in ["", "resources-0: ", "agent-0: "] {
        let expected = format!("{who}[WARN  gym_metrics_otel] metrics export to");
        let line = output
            .lines()
            .find(|l| l.starts_with(&expected))
            .unwrap_or_else(|| panic!("no {expected:?} in:\n{output}"));
        eprintln!("as the user sees it: {line}");
    }
}

/// A fleet-size write from a server role is refused with a warning on
/// standard error. Run in a child process of this test (the logger and the
/// backend are process-wide): the child installs the examples' logger and a
/// server-role backend, then asks to set the fleet size.
#[test]
fn a_refused_fleet_size_write_is_a_warning_on_stderr() {
    if gym_testkit::ran_in_child() {
        return;
    }
    const CHILD: &str = "GYM_REFUSED_WRITE_CHILD";
    const NAME: &str = "warnings_reach_the_user::a_refused_fleet_size_write_is_a_warning_on_stderr";
    if std::env::var_os(CHILD).is_some() {
        gym_metrics_examples::logging::init().expect("the logger installs");
        let any_port = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let guard = gym_metrics_examples::backend::install(
            gym_metrics_api::Role::server("resources-0", "resources"),
            any_port,
            std::time::Duration::ZERO,
            None,
        )
        .expect("the backend installs");
        assert!(gym_metrics_api::record_active_servers(3).is_err());
        drop(guard);
        return;
    }
    let out = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("RUST_LOG", "")
        // On otel, `none` would install no recorder at all: nothing to refuse.
        .env("OTEL_METRICS_EXPORTER", "console")
        .output()
        .expect("the child runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("[WARN  gym_metrics] "))
        .unwrap_or_else(|| panic!("no warning in:\n{stderr}"));
    eprintln!("as the user sees it: {line}");
    assert!(line.contains("resources-0"), "{line}");
}
