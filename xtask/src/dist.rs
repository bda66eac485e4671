//! `cargo xtask dist`: release builds of `gym-fleet`, one per backend, each
//! checked before it is accepted.
//!
//! ```text
//! cargo xtask dist                       # prom, otel and noop
//! cargo xtask dist --backend noop        # one backend
//! cargo xtask dist --baseline old/ --max-growth 10   # fail on a size regression over 10 %
//! cargo xtask dist --profile dev         # the same builds and checks, unoptimised (CI)
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::step::{cargo, run_status, target_dir};

mod checks;
mod manifest;

pub use manifest::Manifest;

/// The backends a release ships, with the Cargo features that select each.
pub const BACKENDS: &[(&str, &[&str])] = &[
    ("prom", &["prom"]),
    ("otel", &["otel"]),
    ("noop", &["noop"]),
];

const BINARY: &str = "gym-fleet";
const PACKAGE: &str = "gym-metrics-examples";

struct Options {
    backends: Vec<&'static str>,
    baseline: Option<PathBuf>,
    max_growth_percent: f64,
    profile: String,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        backends: Vec::new(),
        baseline: None,
        max_growth_percent: 10.0,
        profile: "release".to_string(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--backend" => {
                let name = value("--backend")?;
                let known = BACKENDS
                    .iter()
                    .find(|(b, _)| *b == name)
                    .ok_or_else(|| format!("unknown backend {name:?}: use prom, otel or noop"))?;
                options.backends.push(known.0);
            }
            "--baseline" => options.baseline = Some(PathBuf::from(value("--baseline")?)),
            "--max-growth" => {
                let v = value("--max-growth")?;
                options.max_growth_percent = v
                    .parse()
                    .map_err(|_| format!("--max-growth takes a percentage, got {v:?}"))?;
            }
            "--profile" => options.profile = value("--profile")?,
            other => return Err(format!("unknown dist argument {other:?}")),
        }
    }
    if options.backends.is_empty() {
        options.backends = BACKENDS.iter().map(|(b, _)| *b).collect();
    }
    Ok(options)
}

/// Where the artifacts of `backend` go.
pub fn dist_dir(backend: &str) -> PathBuf {
    target_dir().join("dist").join(backend)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let mut table =
        String::from("| backend | size (bytes) | sha256 | checks |\n|---|---:|---|---|\n");
    let mut failures = Vec::new();
    for backend in &options.backends {
        match build_and_check(backend, &options) {
            Ok(m) => {
                let _ = writeln!(
                    table,
                    "| {} | {} | {}… | {} |",
                    m.backend,
                    m.size_bytes,
                    &m.sha256[..16],
                    m.checks.join("; ")
                );
            }
            Err(e) => {
                let _ = writeln!(table, "| {backend} | — | — | FAILED: {e} |");
                failures.push(format!("{backend}: {e}"));
            }
        }
    }
    println!("\n{table}");
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

fn build_and_check(backend: &'static str, options: &Options) -> Result<Manifest, String> {
    let features = BACKENDS
        .iter()
        .find(|(b, _)| *b == backend)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("unknown backend {backend}"))?;
    let out_dir = dist_dir(backend);
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("create {}: {e}", out_dir.display()))?;

    // The backends build one after another in the one target folder (Cargo
    // keeps each feature set's crates apart); the binary is copied out before
    // the next build replaces it.
    let mut build = cargo();
    build
        .args(["build", "--locked", "--profile", &options.profile])
        .args(["-p", PACKAGE, "--bin", BINARY, "--no-default-features"])
        .arg("--features")
        .arg(features.join(","));
    run_status(build)?;
    // Cargo's folder for the dev profile is `debug`; every other is its name.
    let folder = match options.profile.as_str() {
        "dev" => "debug",
        name => name,
    };
    let built = target_dir().join(folder).join(BINARY);
    let artifact = out_dir.join(BINARY);
    std::fs::copy(&built, &artifact)
        .map_err(|e| format!("copy {} to {}: {e}", built.display(), artifact.display()))?;

    let mut checks = Vec::new();
    match backend {
        "noop" => {
            checks::noop_tree_is_clean()?;
            checks.push("dependency graph has no backend crate".to_string());
            checks::no_backend_symbols(&artifact)?;
            checks.push("binary names no backend crate".to_string());
        }
        "prom" => checks.push(checks::prom_serves_metrics(&artifact)?),
        "otel" => checks.push(checks::otel_console_export(&artifact)?),
        _ => {}
    }

    let manifest = Manifest::describe(backend, features, &artifact, checks)?;
    // Compare before writing, so a baseline that is this very folder is read
    // before it is replaced.
    if let Some(dir) = &options.baseline {
        manifest.compare_size(
            &dir.join(backend).join(manifest::MANIFEST_FILE),
            options.max_growth_percent,
        )?;
    }
    manifest.write(&out_dir)?;
    Ok(manifest)
}
