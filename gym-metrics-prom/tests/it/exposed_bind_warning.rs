//! An endpoint bound where other hosts can reach it (here `0.0.0.0`) logs
//! one warning at start-up: it has no TLS and no authentication yet. (A
//! loopback one logs none: `endpoint_limits.rs` checks that.)
//!
//! So that nothing is ever reachable from outside, the bind happens in this
//! test binary run again under `unshare --net`: a network namespace of its
//! own, whose only interface is a loopback that is down.
#![cfg(target_os = "linux")]

use std::process::Command;
use std::sync::Mutex;

use gym_metrics_prom::PrometheusBuilder;

/// The child's marker: when set, the child test binds `0.0.0.0`.
const CHILD_VAR: &str = "GYM_EXPOSED_BIND_CHILD";
/// What the warning says.
const WARNING: &str = "no TLS and no authentication";

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct WarningsLogger;

impl log::Log for WarningsLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            WARNINGS.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

/// Runs in the isolated child only (a no-op in the parent's run).
#[test]
fn child_binds_every_interface() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    log::set_logger(&WarningsLogger).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    let guard = PrometheusBuilder::new()
        .with_http_listener(([0, 0, 0, 0], 0))
        .install()
        .unwrap();
    assert!(guard.local_addr().ip().is_unspecified());
    guard.shutdown().expect("the endpoint stops cleanly");
    let warnings = WARNINGS.lock().unwrap();
    println!("CHILD-WARNINGS: {}", warnings.len());
    for w in warnings.iter() {
        println!("CHILD-WARNING: {w}");
    }
}

#[test]
fn binding_every_interface_logs_one_warning_at_start_up() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    // A network namespace of its own, so that binding every interface
    // exposes nothing; `--map-root-user` lets a user who is not root make one.
    let output = Command::new("unshare")
        .args(["--map-root-user", "--net", "--"])
        .arg(exe)
        .args([
            "--exact",
            "exposed_bind_warning::child_binds_every_interface",
            "--nocapture",
        ])
        .env(CHILD_VAR, "1")
        .output()
        .expect("unshare (util-linux) isolates this test: install util-linux");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let count: usize = stdout
        .lines()
        .find_map(|l| l.split_once("CHILD-WARNINGS: ").map(|(_, n)| n))
        .unwrap_or_else(|| panic!("the child said nothing: {stdout}"))
        .trim()
        .parse()
        .unwrap();
    let warnings: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once("CHILD-WARNING: ").map(|(_, w)| w))
        .collect();
    assert_eq!(count, 1, "{warnings:?}");
    assert!(warnings[0].contains(WARNING), "{warnings:?}");
    assert!(warnings[0].contains("0.0.0.0:"), "{warnings:?}");
}
