//! `cargo xtask bench [--quick]`: every benchmark of `xtask/bench` (record
//! path, scrape, OpenTelemetry export), callgrind instruction counts, wrk
//! against `/metrics`, resident memory and the no-allocation test, in one
//! run; then `BENCHMARKS.md` and the record-path chart.
//!
//! `--quick` runs every benchmark once, briefly, and writes the report under
//! the target directory instead (to check this command itself).
//!
//! `cargo xtask bench scale` measures fleets instead (see `bench/scale.rs`);
//! the report shows its last kept run.
//!
//! `cargo xtask bench build-cost` measures what each backend, and each peer,
//! costs a user's build instead (see `bench/build_cost.rs`).

mod build_cost;
mod callgrind;
mod chart;
mod clock;
mod figures;
mod history;
mod http_wrk;
mod ipc;
mod machine;
mod report;
mod results;
mod scale;
mod template;
mod wrk;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::step::{cargo, target_dir, workspace_root};
use figures::Doc;
use results::{Count, Results, Rss, Scrape};

/// Cargo for every build of the benchmarks: the release profile (which the
/// bench profile inherits) as shipped, but with its symbols kept, because
/// callgrind finds the counted loops by name (`strip = "symbols"` made every
/// count zero). Every invocation gets the same setting, so none rebuilds
/// what another built.
fn bench_cargo() -> Command {
    let mut cmd = cargo();
    cmd.env("CARGO_PROFILE_RELEASE_STRIP", "none");
    cmd
}

fn status(what: &str, mut cmd: Command) -> Result<(), String> {
    eprintln!("\n==> bench: {what}: {cmd:?}");
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{what}: {s}")),
        Err(e) => Err(format!("{what}: could not start: {e}")),
    }
}

/// The release build of the callgrind loop alone.
fn loop_build() -> Command {
    let mut cmd = bench_cargo();
    cmd.args([
        "build",
        "--release",
        "-p",
        "gym-bench",
        "--bin",
        "callgrind_loop",
    ]);
    cmd
}

/// Builds the helper binaries; returns `(normal dir, path of the noop callgrind loop)`.
fn build_bins(out: &Path) -> Result<(PathBuf, PathBuf), String> {
    // The noop build first: it turns on gym-metrics-api/off, so its binary is
    // copied away before the normal build overwrites it.
    let mut noop = loop_build();
    noop.args(["--features", "noop"]);
    status("build the noop callgrind loop", noop)?;
    let release = target_dir().join("release");
    let noop_loop = out.join("callgrind_loop_noop");
    std::fs::copy(release.join("callgrind_loop"), &noop_loop)
        .map_err(|e| format!("copying the noop callgrind loop: {e}"))?;
    let mut bins = bench_cargo();
    bins.args(["build", "--release", "-p", "gym-bench", "--bins"]);
    status("build the helper binaries", bins)?;
    Ok((release, noop_loop))
}

/// Builds the callgrind loop as an application's plain `cargo build
/// --release` would (no LTO, the default 16 codegen units), in a target
/// folder of its own; returns its path.
fn build_user_loop() -> Result<PathBuf, String> {
    let dir = target_dir().join("bench-user-build");
    let mut user = loop_build();
    user.env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_TARGET_DIR", &dir);
    status("build the callgrind loop as a user's build", user)?;
    Ok(dir.join("release").join("callgrind_loop"))
}

fn counts(release: &Path, noop_loop: &Path, user_loop: &Path, out: &Path) -> Vec<Count> {
    let mut counts = Vec::new();
    for (build, program, backend) in [
        (
            results::PROM_USER_BUILD,
            user_loop.to_path_buf(),
            Some("prom"),
        ),
        ("nothing installed", release.join("callgrind_loop"), None),
        ("noop backend", noop_loop.to_path_buf(), None),
        (
            results::PROM_INSTALLED,
            release.join("callgrind_loop"),
            Some("prom"),
        ),
    ] {
        for mode in ["empty", "duration", "rollout", "verify", "metrics"] {
            eprintln!("==> bench: callgrind {build} {mode}");
            counts.push(Count {
                build,
                mode,
                instructions: callgrind::count(&program, mode, backend, out),
            });
        }
    }
    counts
}

/// The rollout record loop timed in each of [`results::PROCESSES`]
/// processes of the same binary (each its fastest run): a process that settles slower (code or
/// data placement, aliasing of its shard) shows as spread.
fn per_process(release: &Path, quick: bool) -> Result<Vec<f64>, String> {
    let records = if quick { "100000" } else { "20000000" };
    (0..results::PROCESSES)
        .map(|_| {
            let out = Command::new(release.join("callgrind_loop"))
                .args(["rollout", records, "prom", "time"])
                .output()
                .map_err(|e| format!("running callgrind_loop: {e}"))?;
            let text = String::from_utf8_lossy(&out.stdout);
            text.trim().parse().map_err(|_| {
                let err = String::from_utf8_lossy(&out.stderr);
                format!(
                    "callgrind_loop printed no time ({}): {text}{err}",
                    out.status
                )
            })
        })
        .collect()
}

fn rss(release: &Path, quick: bool) -> Vec<Rss> {
    let records = if quick { "100000" } else { "10000000" };
    ["prom", "otel"]
        .into_iter()
        .map(|backend| {
            eprintln!("==> bench: resident memory, {backend}");
            let figures = Command::new(release.join("rss"))
                .args([backend, records])
                .output()
                .map_err(|e| format!("running rss: {e}"))
                .and_then(|o| {
                    let v: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|e| {
                        format!(
                            "rss printed no figures ({e}): {}",
                            String::from_utf8_lossy(&o.stderr)
                        )
                    })?;
                    let g = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
                    Ok((g("rss_kib_small"), g("rss_kib_large"), g("records_large")))
                });
            Rss { backend, figures }
        })
        .collect()
}

fn scrape_under_wrk(release: &Path) -> Result<Scrape, String> {
    let ours = wrk::Server::start(&release.join("prom_endpoint"), &[], 1)?;
    let body_bytes: usize = ours
        .extra
        .first()
        .and_then(|l| l.trim().parse().ok())
        .ok_or("prom_endpoint printed no size")?;
    eprintln!("==> bench: wrk against our /metrics at {}", ours.url);
    let ours_result = wrk::run(&ours.url)?;
    drop(ours);
    let fixed = wrk::Server::start(
        &release.join("fixed_body_server"),
        &[body_bytes.to_string()],
        0,
    )?;
    eprintln!(
        "==> bench: wrk against the fixed-body server at {}",
        fixed.url
    );
    let fixed_result = wrk::run(&fixed.url)?;
    Ok(Scrape {
        body_bytes,
        ours: ours_result,
        fixed: fixed_result,
    })
}

fn now_utc() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Runs everything and writes the report.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(("scale", rest)) = args.split_first().map(|(a, r)| (a.as_str(), r)) {
        return scale::run(rest);
    }
    if let Some(("build-cost", rest)) = args.split_first().map(|(a, r)| (a.as_str(), r)) {
        return build_cost::run(rest);
    }
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(other) = args.iter().find(|a| *a != "--quick") {
        return Err(format!(
            "bench: unknown argument {other:?} (only --quick, or the subcommand scale or build-cost)"
        ));
    }
    let out = target_dir().join("bench");
    // Stale figures must not pass for this run's.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;

    let (release, noop_loop) = build_bins(&out)?;
    let mut benches = bench_cargo();
    benches
        .args(["bench", "-p", "gym-bench", "--benches", "--no-fail-fast"])
        .env("GYM_BENCH_OUT", &out);
    if quick {
        benches.args(["--", "--test"]);
    }
    // A failed bench leaves its JSON missing, and the others still run
    // (`--no-fail-fast`); the report says so.
    if let Err(e) = status("benchmarks", benches) {
        eprintln!("bench: {e}");
    }
    let per_process = per_process(&release, quick);
    let user_loop = build_user_loop()?;
    let counts = counts(&release, &noop_loop, &user_loop, &out);
    let rss = rss(&release, quick);
    let wrk = scrape_under_wrk(&release);
    let http_wrk = http_wrk::run(
        &release.join("http_layer_server"),
        &out,
        if quick { 1 } else { http_wrk::ROUNDS },
    );
    let mut no_alloc = bench_cargo();
    no_alloc.args(["test", "--release", "-p", "gym-bench", "--test", "no_alloc"]);
    let no_alloc = status("the no-allocation test", no_alloc);

    let cpu = machine::Cpu::read();
    let mut results = Results {
        quick,
        record_prom: Doc::load(&out, "record_prom"),
        record_otel: Doc::load(&out, "record_otel"),
        scrape: Doc::load(&out, "scrape"),
        quantiles: Doc::load(&out, "quantiles"),
        otel_export: Doc::load(&out, "otel_export"),
        http_layer: Doc::load(&out, "http_layer"),
        http_wrk,
        counts,
        rss,
        wrk,
        no_alloc,
        per_process,
        machine: machine::describe(&cpu),
        cpu,
        versions: machine::versions(&workspace_root().join("Cargo.lock")),
        finished: now_utc(),
        history: Vec::new(),
        scale: scale::kept_run(),
    };
    // A full run's machine and headline ratios join the repository's
    // history; a quick run's (figures that mean nothing) only a scratch one.
    let history_path = if quick {
        out.join("history.jsonl")
    } else {
        workspace_root().join(history::HISTORY_PATH)
    };
    let entry = history::entry(
        &results.finished,
        &results.cpu,
        &history::headline(&results),
    );
    history::append(&history_path, &entry)?;
    results.history = history::read(&history_path);
    let (markdown_path, chart_path) = if quick {
        (out.join("BENCHMARKS.md"), out.join("record-path.svg"))
    } else {
        (
            workspace_root().join("BENCHMARKS.md"),
            workspace_root().join(report::CHART_PATH),
        )
    };
    let mut groups = chart::groups(
        &results.record_prom.rows("threads_1"),
        &results.record_prom.rows("threads_2"),
    );
    groups.extend(
        chart::groups(
            &results.record_otel.rows("threads_1"),
            &results.record_otel.rows("threads_2"),
        )
        .into_iter()
        .filter(|g| g.label.starts_with("gym-metrics-otel")),
    );
    let chart = chart::chart("Record path: one histogram record, no attributes", &groups)?;
    std::fs::write(&chart_path, chart)
        .map_err(|e| format!("writing {}: {e}", chart_path.display()))?;
    let previous = std::fs::read_to_string(&markdown_path).unwrap_or_default();
    let markdown = build_cost::carry_over(&previous, report::markdown(&results));
    std::fs::write(&markdown_path, markdown)
        .map_err(|e| format!("writing {}: {e}", markdown_path.display()))?;
    println!(
        "bench: wrote {} and {}",
        markdown_path.display(),
        chart_path.display()
    );
    Ok(())
}
