//! `cargo xtask ci`: the README's test command, and exactly what CI runs.

use std::process::{Command, Stdio};

use crate::msrv::LIBRARY_CRATES;
use crate::step::{cargo, Steps};

/// A backend feature set: the packages built together, and their features.
///
/// The first is the workspace exactly as a newcomer builds it (every member,
/// default features: the examples on `prom`). The others are what only a
/// feature switch can reach: the examples on `otel`, and the application's
/// `noop` build, whose feature also turns on the API's `off`.
struct FeatureSet {
    name: &'static str,
    args: &'static [&'static str],
    /// The binaries with unit tests of their own (the programs' `main`s hold
    /// none: their code is in libraries).
    bins: &'static [&'static str],
}

const FEATURE_SETS: &[FeatureSet] = &[
    FeatureSet {
        name: "workspace",
        args: &["--workspace"],
        bins: &["--bin", "xtask"],
    },
    FeatureSet {
        name: "otel",
        args: &[
            "-p",
            "gym-metrics-examples",
            "--no-default-features",
            "--features",
            "otel",
        ],
        bins: &[],
    },
    FeatureSet {
        name: "noop",
        args: &[
            "-p",
            "gym-metrics-examples",
            "--no-default-features",
            "--features",
            "noop",
        ],
        bins: &[],
    },
];

/// This program with `command`: a step run in a process of its own.
fn xtask(command: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap_or_else(|_| "xtask".into()));
    cmd.arg(command);
    cmd
}

fn cargo_with(subcommand: &[&str], set: &FeatureSet, trailing: &[&str]) -> Command {
    let mut cmd = cargo();
    cmd.args(subcommand).args(set.args).args(trailing);
    cmd
}

/// `cargo nextest run` with the `ci` profile (`.config/nextest.toml`): every
/// test in a process of its own, side by side.
/// The benchmarks run once each through `cargo test --benches` instead: a
/// criterion binary prints its own tables where nextest reads a test list.
fn nextest(set: &FeatureSet, trailing: &[&str]) -> Command {
    let mut cmd = cargo_with(&["nextest", "run", "--profile", "ci"], set, trailing);
    cmd.args(["--lib", "--tests"]).args(set.bins);
    cmd
}

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`ci` takes no arguments, got {extra:?}"));
    }
    let mut steps = Steps::default();

    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    steps.command("fmt", fmt);
    steps.check(
        "docs: README.md at most 150 lines, no sentence over 40 words",
        crate::prose::check,
    );

    // The servers the e2e tests drive are provisioned once, beside clippy:
    // downloading and unpacking wait mostly on the network and the disk,
    // clippy on the CPU (a missing cargo-nextest is compiled, and competes).
    // A test would provision a missing server itself, and fail if it could not.
    let log = gym_testkit::tools_dir().join("provision.log");
    let tools = steps.start("tools", xtask("tools"), log);
    for set in FEATURE_SETS {
        steps.command(
            &format!("clippy {}", set.name),
            cargo_with(&["clippy", "--all-targets"], set, &["--", "-D", "warnings"]),
        );
    }
    steps.wait(tools);
    for set in FEATURE_SETS {
        steps.command(&format!("test {}", set.name), nextest(set, &[]));
    }
    let mut benches = cargo();
    benches.args(["test", "--workspace", "--benches"]);
    steps.command("benchmarks, each run once untimed", benches);
    // nextest runs no doc tests: cargo test does, once per feature set. The
    // README's and docs/' code blocks are doc tests of the examples crate; the
    // page with both backends' blocks needs both features.
    for set in FEATURE_SETS {
        let doc = cargo_with(&["test", "--doc"], set, &[]);
        steps.command(&format!("doc tests {}", set.name), doc);
    }
    let mut docs = cargo();
    docs.args([
        "test",
        "--doc",
        "-p",
        "gym-metrics-examples",
        "--features",
        "otel",
    ]);
    steps.command("doc tests README.md and docs/ (prom and otel)", docs);
    steps.check("loom models", loom);
    // Every public item documented and every intra-doc link resolved; then
    // the library crates as docs.rs renders them (nightly, `--cfg docsrs`:
    // each feature-gated item shows its feature).
    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--all-features", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    steps.command("cargo doc, warnings denied", doc);
    // Through rustup: the `cargo` this process finds may be the stable
    // toolchain's own binary, which takes no `+nightly`.
    let mut docs_rs = Command::new("rustup");
    docs_rs
        .current_dir(crate::step::workspace_root())
        .args([
            "run",
            "nightly",
            "cargo",
            "doc",
            "--no-deps",
            "--all-features",
        ])
        .args(LIBRARY_CRATES.iter().flat_map(|k| ["-p", k]))
        .args(["--target-dir", "target/docs-rs"])
        .env("RUSTDOCFLAGS", "--cfg docsrs -D warnings");
    steps.command("docs.rs build (nightly, --cfg docsrs)", docs_rs);
    // The `off` switch, from both sides: record calls reach nothing, and a
    // recording backend built into such a program refuses to start.
    let mut off = cargo();
    off.args([
        "nextest",
        "run",
        "--profile",
        "ci",
        "-p",
        "gym-metrics-api",
        "-p",
        "gym-metrics-prom",
        "-p",
        "gym-metrics-otel",
        "--features",
        "gym-metrics-api/off",
        "--test",
        "compiled_off",
    ]);
    steps.command("off compiled in: nothing recorded, backends refuse", off);
    steps.check(
        "newcomer: cargo run --bin simple records",
        crate::newcomer::simple_records,
    );
    // Every release the README documents, with every check of its artifact,
    // on the dev profile: the release profile's fat LTO costs minutes per
    // backend, and what rots is the command and the checks, not the optimiser.
    steps.check("dist prom, otel, noop (dev profile)", || {
        crate::dist::run(&["--profile".to_string(), "dev".to_string()])
    });
    steps.check(
        "msrv: every library crate in every feature set on Rust 1.85",
        || crate::msrv::run(&[]),
    );
    // After the dev-profile builds above and msrv's checks: the packages and
    // the consumer reuse the dependencies both left in their target folders.
    steps.check(
        "package: build from the packages, an outside consumer checked on Rust 1.85 and run",
        || crate::package::run(&[]),
    );
    steps.finish()
}

/// `cargo xtask e2e`: provision the tools, then only the tests that drive real
/// servers (named `*e2e*`, plus the promtool lints), per feature set.
pub fn e2e(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`e2e` takes no arguments, got {extra:?}"));
    }
    let mut steps = Steps::default();
    if !steps.check("tools", crate::tools::provision_all) {
        return steps.finish();
    }
    for set in FEATURE_SETS {
        steps.command(
            &format!("e2e {}", set.name),
            nextest(set, &["-E", "test(/e2e|promtool/)"]),
        );
    }
    steps.finish()
}

/// The loom models of the lock-free shard protocols: package, and the
/// filter that picks its model. Each crate's unit tests are built with
/// `--cfg loom` for that crate alone (`cargo rustc`), so no dependency is
/// rebuilt for the flag and tokio's own loom mode stays off.
const LOOM_MODELS: &[(&str, &str)] = &[("gym-metrics-kit", "sharded_histogram_loom")];

/// `cargo xtask loom`: every loom model, in the dev profile (a model runs in
/// about a second there), its crate compiled with warnings denied.
pub fn loom() -> Result<(), String> {
    for (package, filter) in LOOM_MODELS {
        let built = cargo()
            .args(["rustc", "-p", package, "--lib", "--profile", "test"])
            .args(["--message-format=json-render-diagnostics", "--"])
            // Warnings denied, as clippy denies them for the code it sees
            // (it never sees what only `--cfg loom` compiles).
            .args(["--cfg", "loom", "-D", "warnings"])
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("could not run cargo rustc: {e}"))?;
        if !built.status.success() {
            return Err(format!("building {package}'s unit tests under loom failed"));
        }
        let executable = String::from_utf8_lossy(&built.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|message| message["reason"] == "compiler-artifact")
            .find_map(|message| message["executable"].as_str().map(str::to_string))
            .ok_or_else(|| format!("cargo rustc named no test executable for {package}"))?;
        let run = Command::new(&executable)
            .arg(filter)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("could not run {executable}: {e}"))?;
        let stdout = String::from_utf8_lossy(&run.stdout);
        print!("{stdout}");
        if !run.status.success() || stdout.contains(" 0 passed") {
            return Err(format!(
                "the loom model {filter} of {package} failed or ran no test"
            ));
        }
    }
    Ok(())
}
