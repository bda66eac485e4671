//! `cargo xtask ci`: the README's test command, and exactly what CI runs.

use std::process::Command;

use crate::step::{cargo, Steps};

/// A backend feature set: the packages built together, and their features.
///
/// The no-op set is built apart from the others: `gym-metrics-noop` turns on the
/// API's `off` feature, and feature unification would otherwise compile every
/// other crate's record calls away too.
struct FeatureSet {
    name: &'static str,
    args: &'static [&'static str],
}

const FEATURE_SETS: &[FeatureSet] = &[
    FeatureSet {
        name: "prom (workspace)",
        args: &["--workspace", "--exclude", "gym-metrics-noop"],
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
    },
    FeatureSet {
        name: "noop",
        args: &[
            "-p",
            "gym-metrics-noop",
            "-p",
            "gym-metrics-examples",
            "--no-default-features",
            "--features",
            "noop",
        ],
    },
];

fn cargo_with(subcommand: &[&str], set: &FeatureSet, trailing: &[&str]) -> Command {
    let mut cmd = cargo();
    cmd.args(subcommand).args(set.args).args(trailing);
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

    for set in FEATURE_SETS {
        steps.command(
            &format!("clippy {}", set.name),
            cargo_with(&["clippy", "--all-targets"], set, &["--", "-D", "warnings"]),
        );
    }
    // Provision the servers the e2e tests drive; a missing tool then fails a test
    // (GYM_REQUIRE_TOOLS=1) instead of skipping it.
    steps.check("tools", crate::tools::provision);
    for set in FEATURE_SETS {
        let mut test = cargo_with(&["test", "--all-targets"], set, &[]);
        test.env("GYM_REQUIRE_TOOLS", "1");
        steps.command(&format!("test {}", set.name), test);
    }
    for set in FEATURE_SETS {
        let mut doc = cargo_with(&["test", "--doc"], set, &[]);
        doc.env("GYM_REQUIRE_TOOLS", "1");
        steps.command(&format!("doc tests {}", set.name), doc);
    }
    // Model checks of the lock-free shard protocols (verify tally, sharded
    // histogram) under loom, in the dev profile (the models run in about a
    // second there; the release profile's LTO would cost minutes to build).
    // Each flag gets its own target folder so the
    // ordinary builds above are not invalidated. The Prometheus crate uses its
    // own `gym_loom` flag because tokio has a loom mode of its own.
    for (name, flag, package, filter) in LOOM_MODELS {
        let mut loom = cargo();
        loom.args(["test", "--lib", "-p", package, filter])
            .env("RUSTFLAGS", format!("--cfg {flag}"))
            .env("CARGO_TARGET_DIR", crate::step::target_dir().join(flag));
        steps.command(name, loom);
    }
    steps.check(
        "noop build has no backend crate",
        crate::ci::noop_tree_is_clean,
    );
    // A release build per backend would cost CI minutes for little; the noop
    // artifact is the cheapest and its checks (dependency graph, bytes) the
    // ones most likely to rot, so CI cuts that one release.
    steps.check("dist noop", || {
        crate::dist::run(&["--backend".to_string(), "noop".to_string()])
    });
    steps.finish()
}

/// `cargo xtask e2e`: provision the tools, then only the tests that drive real
/// servers (test binaries named `*e2e*`, plus the promtool lint), per feature set.
pub fn e2e(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`e2e` takes no arguments, got {extra:?}"));
    }
    let mut steps = Steps::default();
    if !steps.check("tools", crate::tools::provision) {
        return steps.finish();
    }
    for set in FEATURE_SETS {
        let mut test = cargo_with(&["test", "--test", "*e2e*"], set, &[]);
        test.env("GYM_REQUIRE_TOOLS", "1");
        steps.command(&format!("e2e {}", set.name), test);
    }
    let mut lint = cargo();
    lint.args(["test", "-p", "gym-metrics-prom", "--test", "promtool_check"])
        .env("GYM_REQUIRE_TOOLS", "1");
    steps.command("promtool check metrics", lint);
    steps.finish()
}

/// The loom models: step name, cfg flag, package, test filter.
const LOOM_MODELS: &[(&str, &str, &str, &str)] = &[
    ("loom verify tally", "loom", "gym-metrics-api", "tally_loom"),
    (
        "loom sharded histogram",
        "gym_loom",
        "gym-metrics-prom",
        "sharded_histogram_loom",
    ),
];

/// Crates that only a backend needs; none may appear in the no-op build.
pub const BACKEND_ONLY_CRATES: &[&str] = &["opentelemetry", "prometheus", "reqwest", "tonic"];

/// `cargo tree` of the no-op build of the examples must name no backend-only crate.
pub fn noop_tree_is_clean() -> Result<(), String> {
    let out = cargo()
        .args([
            "tree",
            "-p",
            "gym-metrics-examples",
            "--no-default-features",
            "--features",
            "noop",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .map_err(|e| format!("could not run cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let tree = String::from_utf8_lossy(&out.stdout);
    let offenders: Vec<&str> = tree
        .lines()
        .filter(|line| {
            let name = line.split_whitespace().next().unwrap_or("");
            BACKEND_ONLY_CRATES.iter().any(|c| {
                name == *c
                    || name.starts_with(&format!("{c}-"))
                    || name.starts_with(&format!("{c}_"))
            })
        })
        .collect();
    if offenders.is_empty() {
        eprintln!(
            "{} crates in the noop build, none backend-only",
            tree.lines().count()
        );
        Ok(())
    } else {
        Err(format!(
            "the noop build pulls in backend crates: {offenders:?}"
        ))
    }
}
