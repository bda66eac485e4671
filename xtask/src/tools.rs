//! `cargo xtask tools`: provisions Prometheus, promtool, VictoriaMetrics, rotel
//! (and wrk, for benchmarks) under `<workspace>/target/tools/`, the test
//! runner, cargo-nextest, and trixie's Rust 1.85 (`rust_msrv`).
//!
//! A tool named by its env variable (`PROMETHEUS_BIN`, ...) or already under
//! `target/tools/bin/` or on `PATH` is used as found. Otherwise the Debian
//! packages are fetched with a private apt configuration (the system's sources
//! stay untouched, nothing is installed) and unpacked with `dpkg -x`, and rotel
//! comes from PyPI into a private venv. Every tool is then run once for its version.

mod apt;
mod debs;
mod gym_venv;
mod link;
mod locate;
mod lock;
mod nextest;
mod pip;
mod probe;
mod run;
pub mod rust_msrv;
mod spec;

use std::path::{Path, PathBuf};
use std::time::Instant;

use gym_testkit::{tools_bin_dir, tools_dir};

use locate::{locate, Origin};
use spec::{specs, Source, ToolSpec};

/// `cargo xtask tools [--servers]`: `--servers` provisions only what the
/// tests drive, not the test runner (a test that finds a tool missing asks
/// for that: a plain `cargo test` needs no nextest).
pub fn run(args: &[String]) -> Result<(), String> {
    match args {
        [] => provision_all(),
        [only] if only == "--servers" => provision(),
        [extra, ..] => Err(format!("`tools` takes only `--servers`, got {extra:?}")),
    }
}

/// Every tool, the test runner CI uses (cargo-nextest), and the oldest Rust
/// the library crates declare (trixie's, in a folder of its own).
pub fn provision_all() -> Result<(), String> {
    provision()?;
    let version = nextest::provision()?;
    println!("{version}");
    let version = rust_msrv::provision()?;
    println!("{version} in {}", rust_msrv::root().display());
    Ok(())
}

/// Makes every tool available and prints one line per tool (name, path,
/// version, origin); `Err` names the tool and the step that failed.
pub fn provision() -> Result<(), String> {
    let start = Instant::now();
    let dir = tools_dir();
    std::fs::create_dir_all(tools_bin_dir())
        .map_err(|e| format!("cannot create {}: {e}", tools_bin_dir().display()))?;
    let _lock = lock::ToolsLock::acquire(&dir)?;

    let mut ready: Vec<(ToolSpec, PathBuf, Origin)> = Vec::new();
    let mut missing: Vec<ToolSpec> = Vec::new();
    for spec in specs() {
        match locate(&spec) {
            Some((path, origin)) => ready.push((spec, path, origin)),
            None => missing.push(spec),
        }
    }

    // The Debian packages and the PyPI venv are independent: fetch both at once.
    let (from_debian, from_pypi): (Vec<ToolSpec>, Vec<ToolSpec>) = missing
        .into_iter()
        .partition(|s| matches!(s.source, Source::Deb { .. }));
    let outcomes = std::thread::scope(|scope| {
        let pypi = scope.spawn(|| {
            from_pypi
                .iter()
                .map(|spec| {
                    let outcome = match spec.source {
                        Source::NemoGymVenv => gym_venv::provision(&dir, spec.name),
                        _ => pip::provision_rotel(&dir, spec.name),
                    };
                    (*spec, outcome)
                })
                .collect::<Vec<_>>()
        });
        let mut outcomes = if from_debian.is_empty() {
            Vec::new()
        } else {
            debs::provision(&dir, &from_debian)
        };
        match pypi.join() {
            Ok(more) => outcomes.extend(more),
            Err(_) => outcomes.extend(
                from_pypi
                    .iter()
                    .map(|s| (*s, Err(format!("{}: provisioning panicked", s.name)))),
            ),
        }
        outcomes
    });

    let mut failures: Vec<(ToolSpec, String)> = Vec::new();
    for (spec, outcome) in outcomes {
        match outcome {
            Ok(path) => ready.push((spec, path, Origin::Provisioned)),
            Err(e) => failures.push((spec, e)),
        }
    }
    let order: Vec<&str> = specs().iter().map(|s| s.name).collect();
    ready.sort_by_key(|(spec, _, _)| order.iter().position(|n| *n == spec.name));
    for (spec, path, origin) in &ready {
        match report_line(&dir, spec, path, *origin) {
            Ok(line) => println!("{line}"),
            Err(e) => failures.push((*spec, e)),
        }
    }

    let mut fatal = Vec::new();
    for (spec, error) in failures {
        if spec.optional {
            eprintln!(
                "warning: {} (optional, the tests do not need it): {error}",
                spec.name
            );
        } else {
            fatal.push(error);
        }
    }
    eprintln!("tools: done in {:.1}s", start.elapsed().as_secs_f64());
    if fatal.is_empty() {
        Ok(())
    } else {
        Err(fatal.join("\n"))
    }
}

/// `name  path  version  origin`, after running the tool for its version.
fn report_line(dir: &Path, spec: &ToolSpec, path: &Path, origin: Origin) -> Result<String, String> {
    let version = probe::version(path, spec.version_args)
        .map_err(|e| format!("{}: version check failed: {e}", spec.name))?;
    let version = if !version.is_empty() {
        version
    } else if origin.is_ours() {
        debs::package_version(dir, spec).unwrap_or_else(|| "(prints no version)".into())
    } else {
        "(prints no version)".into()
    };
    Ok(format!(
        "{:<17} {:<50} {:<32} {origin}",
        spec.name,
        path.display(),
        version
    ))
}
