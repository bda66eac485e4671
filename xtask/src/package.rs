//! `cargo xtask package`: the library crates as a user gets them.
//!
//! 1. `cargo package` packs every library crate and builds each one from
//!    its package, in dependency order (a file reached outside the crate's
//!    folder fails here, not at publish time).
//! 2. An outside consumer (`xtask/consumer`, not a workspace member) takes
//!    the unpacked packages in place of the registry's crates. Trixie's
//!    Rust 1.85, the oldest the crates declare, resolves it anew (offline,
//!    among the crates fetched here) and checks it once per backend.
//! 3. This machine's Rust builds and runs it once per backend: it records
//!    one rollout and reads it back.

use crate::msrv::{cargo_home, check_denying_warnings, fetch, INSIDE, LIBRARY_CRATES};
use crate::newcomer::rollout_counted;
use crate::step::{cargo, run_status, target_dir, workspace_root};
use crate::tools::rust_msrv;

/// The consumer's manifest, under the workspace's root.
const CONSUMER: &str = "xtask/consumer/Cargo.toml";

/// Packs and verifies the library crates, then checks the consumer on 1.85
/// and runs it, per backend.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`package` takes no arguments, got {extra:?}"));
    }
    let packages = packages_inside()?; // before minutes of packing, not after
    forget_unpacked()?;
    pack()?;
    check_on_msrv(&packages)?;
    consume()
}

/// Removes what earlier runs unpacked of these crates from their temporary
/// registry. Cargo packs into `target/package/tmp-registry` and unpacks from
/// it into `$CARGO_HOME/registry/src/-<hash of that path>/`, but it reuses an
/// unpacked `name-version` folder without comparing checksums. So, the
/// version unchanged, a crate was verified against the API of an earlier run
/// (in CI: unresolved `backend::Exemplar`). A local registry's folder is the
/// one whose name starts with `-` (it has no host); only our crates go.
fn forget_unpacked() -> Result<(), String> {
    let sources = cargo_home().join("registry/src");
    let Ok(registries) = std::fs::read_dir(&sources) else {
        return Ok(()); // nothing unpacked yet
    };
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for krate in LIBRARY_CRATES {
            let unpacked = registry.path().join(packaged(krate));
            if unpacked.exists() {
                std::fs::remove_dir_all(&unpacked)
                    .map_err(|e| format!("{}: {e}", unpacked.display()))?;
            }
        }
    }
    Ok(())
}

/// The folder a crate's package unpacks to: `name-version`.
fn packaged(krate: &str) -> String {
    format!("{krate}-{}", env!("CARGO_PKG_VERSION"))
}

/// `cargo package` of the five crates at once: cargo packs them in
/// dependency order and verifies each against the others' packages.
fn pack() -> Result<(), String> {
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

/// The backends the consumer is built with, each its cargo feature.
const BACKENDS: [&str; 3] = ["prom", "otel", "noop"];

/// The consumer on Rust 1.85. Trixie's cargo resolves it anew (its lockfile
/// is never committed), offline, among the crates this machine has fetched.
/// It then checks it per backend with warnings denied. The target folder is
/// the one `cargo xtask msrv` fills with the same dependencies, so only the
/// packages themselves are checked again. `packages` is where the packages
/// are as that folder sees them ([`packages_inside`]).
fn check_on_msrv(packages: &str) -> Result<(), String> {
    let version = rust_msrv::provision()?;
    fetch()?;
    let lock = workspace_root().join("xtask/consumer/Cargo.lock");
    if lock.exists() {
        std::fs::remove_file(&lock).map_err(|e| format!("{}: {e}", lock.display()))?;
    }
    for backend in BACKENDS {
        let mut args: Vec<String> = vec!["check".into(), "--quiet".into()];
        args.extend(consumer_args(INSIDE, packages, backend));
        if !check_denying_warnings(&args) {
            return Err(format!(
                "consumer {backend}: resolving or checking on {version} failed"
            ));
        }
        eprintln!("package: consumer {backend} resolved and checked on {version}");
    }
    Ok(())
}

/// Where the packages are as Rust 1.85's folder sees them: it sees the
/// workspace only (at `INSIDE`), so a target folder outside it is an error.
fn packages_inside() -> Result<String, String> {
    let packages = target_dir().join("package");
    match packages.strip_prefix(workspace_root()) {
        Ok(inside) => Ok(format!("{INSIDE}/{}", inside.display())),
        Err(_) => Err(format!(
            "the packages go to {}, outside the workspace, where Rust 1.85's folder cannot see them: unset CARGO_TARGET_DIR or point it inside the workspace",
            packages.display()
        )),
    }
}

/// Builds and runs the consumer with each backend on this machine's Rust,
/// in the workspace's target folder and dev profile: dependencies are the
/// ones its builds left there, so only the packages and the consumer build.
/// It uses the lockfile [`check_on_msrv`] wrote (`--locked`).
fn consume() -> Result<(), String> {
    let root = workspace_root();
    let packages = target_dir().join("package");
    let (Some(root), Some(packages)) = (root.to_str(), packages.to_str()) else {
        return Err("the workspace or target folder's path is not UTF-8".into());
    };
    for backend in BACKENDS {
        let mut cmd = cargo();
        cmd.args(["run", "--quiet", "--locked"])
            .args(consumer_args(root, packages, backend))
            .args(["--config", "profile.dev.package.\"*\".debug=false"])
            .env("CARGO_TARGET_DIR", target_dir())
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", "0")
            .env("OTEL_METRICS_EXPORTER", "console");
        let output = cmd
            .output()
            .map_err(|e| format!("consumer {backend}: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!(
                "consumer {backend} failed ({}):\n{stdout}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        read_back(backend, &stdout)?;
        eprintln!("package: consumer {backend}: recorded and read back");
    }
    Ok(())
}

/// The consumer's manifest under the workspace seen at `root`, the backend's
/// feature, and each published name read from its package in `packages`
/// (where `cargo package` left them), not from the tree.
fn consumer_args(root: &str, packages: &str, backend: &str) -> Vec<String> {
    let mut args = vec![
        "--manifest-path".into(),
        format!("{root}/{CONSUMER}"),
        "--features".into(),
        backend.into(),
    ];
    for krate in LIBRARY_CRATES {
        args.push("--config".into());
        args.push(format!(
            "patch.crates-io.{krate}.path=\"{packages}/{}\"",
            packaged(krate)
        ));
    }
    args
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
