//! `cargo xtask package`: the library crates as a user gets them.
//!
//! 1. `cargo package` packs every library crate and builds each one from
//!    its package, in dependency order (a file reached outside the crate's
//!    folder fails here, not at publish time).
//! 2. An outside consumer (`xtask/consumer`, not a workspace member) takes
//!    the unpacked packages in place of the registry's crates, and is built
//!    and run once per backend by trixie's Rust 1.85, the oldest the crates
//!    declare: it records one rollout and reads it back.

use crate::msrv::{cargo_msrv, fetch, INSIDE, LIBRARY_CRATES};
use crate::newcomer::rollout_counted;
use crate::step::{cargo, run_status};
use crate::tools::rust_msrv;

/// The consumer's manifest, as seen inside the toolchain's folder.
const CONSUMER: &str = "xtask/consumer/Cargo.toml";

/// Packs and verifies the library crates, then runs the consumer per backend.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`package` takes no arguments, got {extra:?}"));
    }
    pack()?;
    consume()
}

/// `cargo package` of the five crates at once: cargo packs them in
/// dependency order and verifies each against the others' packages.
pub fn pack() -> Result<(), String> {
    let mut cmd = cargo();
    // The workspace's own dev profile (dependencies without debug info):
    // a package is verified as a workspace of its own, which has none.
    cmd.args(["package", "--locked", "--allow-dirty", "--config"])
        .arg("profile.dev.package.\"*\".debug=false");
    for krate in LIBRARY_CRATES {
        cmd.args(["-p", krate]);
    }
    run_status(cmd)
}

/// Builds and runs the consumer with each backend, on Rust 1.85.
pub fn consume() -> Result<(), String> {
    let version = rust_msrv::provision()?;
    fetch()?;
    for backend in ["prom", "otel", "noop"] {
        let mut args: Vec<String> = vec![
            "run".into(),
            "--quiet".into(),
            "--manifest-path".into(),
            format!("{INSIDE}/{CONSUMER}"),
            "--features".into(),
            backend.into(),
        ];
        // Each published name is read from its package, not from the tree.
        for krate in LIBRARY_CRATES {
            args.push("--config".into());
            args.push(format!(
                "patch.crates-io.{krate}.path=\"{INSIDE}/target/package/{krate}-{}\"",
                env!("CARGO_PKG_VERSION")
            ));
        }
        let mut cmd = cargo_msrv(&args);
        cmd.env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", "0")
            .env("OTEL_METRICS_EXPORTER", "console");
        let output = cmd
            .output()
            .map_err(|e| format!("consumer {backend}: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "consumer {backend} on {version} failed ({}):\n{stdout}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        read_back(backend, &stdout)?;
        eprintln!("package: consumer {backend} on {version}: recorded and read back");
    }
    Ok(())
}

/// The consumer's output shows the one rollout it recorded.
fn read_back(backend: &str, stdout: &str) -> Result<(), String> {
    match backend {
        "prom" => rollout_counted(stdout),
        "otel"
            if stdout.contains("\"gym.rollout.duration_ms\"")
                && stdout.contains("\"count\":\"1\"") =>
        {
            Ok(())
        }
        "noop" if stdout.contains("consumer: noop: recorded nothing") => Ok(()),
        _ => Err(format!(
            "consumer {backend}: its output lacks the rollout:\n{stdout}"
        )),
    }
}
