//! `cargo xtask msrv`: every library crate, in every feature set, checked by
//! the Rust its manifest declares (`rust-version`), Debian trixie's 1.85.1.
//!
//! The toolchain runs in its debootstrap folder (`tools::rust_msrv`), with
//! the workspace and this machine's crate registry bound into it, offline:
//! the crates were fetched by the host's cargo, and the lockfile was resolved
//! for 1.85 (`resolver = "3"` falls back to the newest version whose
//! `rust-version` fits).

use std::path::PathBuf;
use std::process::Command;

use crate::step::{cargo, run_status, workspace_root};
use crate::tools::rust_msrv;

/// The crates a user depends on, in dependency order.
pub const LIBRARY_CRATES: [&str; 5] = [
    "gym-metrics-api",
    "gym-metrics-kit",
    "gym-metrics-noop",
    "gym-metrics-prom",
    "gym-metrics-otel",
];

/// Where the workspace appears inside the folder.
pub const INSIDE: &str = "/src";

/// `cargo <args>` run by trixie's cargo inside its folder, in `/src` (the
/// workspace), with the target folder `target/msrv` (its artifacts are
/// 1.85's, never mixed with the host's) and the host's registry, offline.
pub fn cargo_msrv(args: &[String]) -> Command {
    let root = rust_msrv::root();
    let registry = cargo_home().join("registry");
    // unshare: the bind mounts live in a mount namespace of their own and
    // vanish with it, whatever happens to this process.
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--fork", "sh", "-c"])
        .arg(concat!(
            "set -e; root=$1; shift; ",
            "mkdir -p \"$root/src\" \"$root/cargo-home/registry\"; ",
            "mount --bind \"$WORKSPACE\" \"$root/src\"; ",
            "mount --bind \"$REGISTRY\" \"$root/cargo-home/registry\"; ",
            "exec chroot \"$root\" /usr/bin/env -C /src ",
            "CARGO_HOME=/cargo-home CARGO_TARGET_DIR=/src/target/msrv ",
            "CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never RUSTFLAGS=\"$RUSTFLAGS\" cargo \"$@\""
        ))
        .arg("sh")
        .arg(&root)
        .args(args)
        .env("WORKSPACE", workspace_root())
        .env("REGISTRY", registry);
    cmd
}

/// `$CARGO_HOME`, else `~/.cargo`.
pub fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"))
}

/// Provisions the toolchain, fetches every locked crate with the host's cargo,
/// then checks each library crate with no features, its defaults, each
/// feature alone and all of them, warnings denied.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`msrv` takes no arguments, got {extra:?}"));
    }
    let version = rust_msrv::provision()?;
    eprintln!("msrv: {version}");
    fetch()?;
    let features = crate_features()?;
    let mut failed = Vec::new();
    for (krate, sets) in &features {
        for set in feature_sets(sets) {
            let mut args = vec![
                "check".into(),
                "--locked".into(),
                "-p".into(),
                krate.clone(),
            ];
            args.extend(set.iter().cloned());
            eprintln!("msrv: cargo {}", args.join(" "));
            if !check_denying_warnings(&args) {
                failed.push(format!("{krate} {}", set.join(" ")));
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("on {version}: {}", failed.join("; ")))
    }
}

/// `cargo <args>` (a check) on 1.85 with warnings denied: a feature set
/// that leaves an import unused fails. Every 1.85 check runs with the same
/// flags, so each reuses the dependencies the others checked.
pub fn check_denying_warnings(args: &[String]) -> bool {
    cargo_msrv(args)
        .env("RUSTFLAGS", "-D warnings")
        .status()
        .is_ok_and(|s| s.success())
}

/// `cargo fetch` by the host: the folder's cargo runs offline.
pub fn fetch() -> Result<(), String> {
    let mut fetch = cargo();
    fetch.args(["fetch", "--locked"]);
    run_status(fetch)
}

/// The features of each library crate, from `cargo metadata`.
fn crate_features() -> Result<Vec<(String, Vec<String>)>, String> {
    let output = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata: not JSON: {e}"))?;
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    LIBRARY_CRATES
        .iter()
        .map(|name| {
            let package = packages
                .iter()
                .find(|p| p["name"] == *name)
                .ok_or_else(|| format!("cargo metadata lists no {name}"))?;
            let features = package["features"]
                .as_object()
                .map(|f| f.keys().filter(|k| *k != "default").cloned().collect())
                .unwrap_or_default();
            Ok((name.to_string(), features))
        })
        .collect()
}

/// The argument lists: none, the defaults, each feature alone, all.
fn feature_sets(features: &[String]) -> Vec<Vec<String>> {
    let mut sets = vec![vec!["--no-default-features".to_string()], vec![]];
    for feature in features {
        sets.push(vec![
            "--no-default-features".into(),
            "--features".into(),
            feature.clone(),
        ]);
    }
    if features.len() > 1 {
        sets.push(vec!["--all-features".into()]);
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::feature_sets;

    #[test]
    fn each_feature_alone_and_together() {
        let sets = feature_sets(&["a".into(), "b".into()]);
        let shown: Vec<String> = sets.iter().map(|s| s.join(" ")).collect();
        assert_eq!(
            shown,
            [
                "--no-default-features",
                "",
                "--no-default-features --features a",
                "--no-default-features --features b",
                "--all-features"
            ]
        );
    }
}
