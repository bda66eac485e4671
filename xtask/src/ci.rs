//! `cargo xtask ci`: the README's test command, and exactly what CI runs.

use std::process::Command;

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
}

const FEATURE_SETS: &[FeatureSet] = &[
    FeatureSet {
        name: "workspace",
        args: &["--workspace"],
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
    steps.check(
        "docs: README.md at most 150 lines, no sentence over 40 words",
        crate::prose::check,
    );

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
    // The README's and docs/' code blocks are doc tests of the examples
    // crate; the page with both backends' blocks needs both features.
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
    // The `off` switch, from both sides: record calls reach nothing, and a
    // recording backend built into such a program refuses to start.
    let mut off = cargo();
    off.args([
        "test",
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
    lint.args([
        "test",
        "-p",
        "gym-metrics-prom",
        "--test",
        "installs_nothing",
        "--",
        "promtool_check::",
    ])
    .env("GYM_REQUIRE_TOOLS", "1");
    steps.command("promtool check metrics", lint);
    steps.finish()
}

/// The loom models: step name, cfg flag, package, test filter.
const LOOM_MODELS: &[(&str, &str, &str, &str)] = &[
    ("loom verify tally", "loom", "gym-metrics-kit", "tally_loom"),
    (
        "loom sharded histogram",
        "gym_loom",
        "gym-metrics-prom",
        "sharded_histogram_loom",
    ),
];
