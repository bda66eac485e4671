//! `cargo xtask bench scale [--quick] [--sizes 10,50,200] [--minutes 10]`:
//! a real gym-fleet at each size, discovered and scraped by a real
//! Prometheus server, measured per process (series, exposition bytes,
//! scrape duration, memory, launch to first scrape) and as a whole (the
//! orchestrator's CPU and memory, its `GET /sd`); the largest size also
//! after `--minutes`; then the SD endpoint alone at synthetic sizes up to
//! 10,000 targets. Writes `xtask/bench/scale.json`, the chart, the
//! "Fleet scale" section of `BENCHMARKS.md` and the derived block of
//! `SCALE.md`.
//!
//! `--quick` runs two small fleets briefly and writes everything under the
//! target directory instead (to check this command itself); `--render`
//! measures nothing and rewrites the chart, the section and the block from
//! the kept `xtask/bench/scale.json` (after a change to how they read).

mod chart;
mod figures;
mod fleet_run;
mod proc_stat;
mod sd_cost;
mod section;

use std::path::Path;
use std::time::Duration;

use crate::step::{target_dir, workspace_root};
use figures::ScaleRun;
use fleet_run::Plan;

pub use figures::{ScaleRun as ScaleRunKept, SCALE_JSON};
pub use section::benchmarks_section;

/// The chart, relative to the workspace root.
pub const CHART_PATH: &str = "xtask/bench/fleet-scale.svg";
/// The plan whose derived block a full run rewrites.
const PLAN_PATH: &str = "SCALE.md";
/// The scraper's interval and SD refresh.
const INTERVAL: Duration = Duration::from_secs(5);
/// Every fleet size is snapshotted this long after its launch.
const FIRST_SNAPSHOT: Duration = Duration::from_secs(60);

/// The run kept in the repository, for the main report.
pub fn kept_run() -> Option<ScaleRun> {
    ScaleRun::load(&workspace_root().join(SCALE_JSON))
}

#[derive(Debug)]
struct Options {
    quick: bool,
    render: bool,
    sizes: Vec<usize>,
    minutes: u64,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        render: false,
        sizes: vec![10, 50, 200],
        minutes: 10,
    };
    let mut args = args.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--render" => o.render = true,
            "--sizes" => {
                let v = args.next().ok_or("--sizes needs a list, e.g. 10,50,200")?;
                o.sizes = v
                    .split(',')
                    .map(|n| match n.trim().parse::<usize>() {
                        Ok(n) if (3..=257).contains(&n) => Ok(n),
                        _ => Err(format!(
                            "--sizes {v:?}: each size is a process count from 3 to 257"
                        )),
                    })
                    .collect::<Result<_, _>>()?;
                o.sizes.sort_unstable();
            }
            "--minutes" => {
                let v = args.next().ok_or("--minutes needs a number")?;
                o.minutes = v
                    .parse()
                    .ok()
                    .filter(|m| (2..=120).contains(m))
                    .ok_or_else(|| format!("--minutes {v:?}: a whole number from 2 to 120"))?;
            }
            other => {
                return Err(format!(
                    "bench scale: unknown argument {other:?} (--quick, --render, --sizes LIST, --minutes N)"
                ))
            }
        }
    }
    if o.quick && o.render {
        return Err(
            "bench scale: --render rewrites from the kept figures; a --quick run keeps none".into(),
        );
    }
    if o.quick {
        o.sizes = vec![5, 12];
    }
    Ok(o)
}

fn build() -> Result<(), String> {
    let mut fleet = super::bench_cargo();
    fleet.args([
        "build",
        "--release",
        "-p",
        "gym-metrics-examples",
        "--bin",
        "gym-fleet",
    ]);
    super::status("build gym-fleet", fleet)?;
    let mut sd = super::bench_cargo();
    sd.args([
        "build",
        "--release",
        "-p",
        "gym-bench",
        "--bin",
        "sd_synthetic",
    ]);
    super::status("build the synthetic SD server", sd)
}

fn sd_synthetic(release: &Path, sizes: &[usize]) -> Result<Vec<figures::SdCost>, String> {
    sizes
        .iter()
        .map(|&n| {
            eprintln!("==> bench scale: GET /sd holding {n} synthetic targets");
            let server =
                super::wrk::Server::start(&release.join("sd_synthetic"), &[n.to_string()], 1)?;
            let publish_us: f64 = server
                .extra
                .first()
                .and_then(|l| l.trim().parse().ok())
                .ok_or("sd_synthetic printed no publish time")?;
            sd_cost::measure(&server.url, n, Some(publish_us / 1000.0), 50)
        })
        .collect()
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Runs the fleets and writes the figures.
pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    if o.render {
        let run = kept_run().ok_or_else(|| {
            format!("bench scale --render: no readable {SCALE_JSON}; run `cargo xtask bench scale`")
        })?;
        return write_outputs(&run, false);
    }
    gym_testkit::tool_path(gym_testkit::Tool::Prometheus)
        .ok_or("bench scale: prometheus is not provisioned: run `cargo xtask tools`")?;
    build()?;
    let release = target_dir().join("release");
    let (first, long) = if o.quick {
        (Duration::from_secs(20), Duration::from_secs(40))
    } else {
        (FIRST_SNAPSHOT, Duration::from_secs(o.minutes * 60))
    };
    let mut sizes = Vec::new();
    for (i, &processes) in o.sizes.iter().enumerate() {
        let mut snapshots = vec![first];
        if i + 1 == o.sizes.len() {
            snapshots.push(long);
        }
        eprintln!("\n==> bench scale: {processes} processes, snapshots at {snapshots:?}");
        let plan = Plan::of(processes, snapshots, INTERVAL);
        sizes.push(fleet_run::measure(&release.join("gym-fleet"), &plan)?);
    }
    let synthetic = if o.quick {
        vec![100, 1_000]
    } else {
        vec![1_000, 10_000]
    };
    let run = ScaleRun {
        finished: super::now_utc(),
        machine: super::machine::Cpu::read().describe(),
        interval_s: INTERVAL.as_secs_f64(),
        quick: o.quick,
        sizes,
        sd_synthetic: sd_synthetic(&release, &synthetic)?,
    };
    write_outputs(&run, o.quick)
}

/// The figures, the chart, the section and the block: into the repository,
/// or for a quick run under the target directory.
fn write_outputs(run: &ScaleRun, quick: bool) -> Result<(), String> {
    let json = serde_json::to_string_pretty(run).map_err(|e| format!("scale figures: {e}"))?;
    let root = workspace_root();
    let out = target_dir().join("bench-scale");
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let (json_path, chart_path, bench_path, plan_path) = if quick {
        (
            out.join("scale.json"),
            out.join("fleet-scale.svg"),
            out.join("BENCHMARKS.md"),
            out.join("SCALE.md"),
        )
    } else {
        (
            root.join(SCALE_JSON),
            root.join(CHART_PATH),
            root.join("BENCHMARKS.md"),
            root.join(PLAN_PATH),
        )
    };
    write(&json_path, &json)?;
    write(&chart_path, &chart::chart(run)?)?;
    let splice_into = |from: &Path, to: &Path, begin: &str, end: &str, part: &str| {
        let text = std::fs::read_to_string(from).unwrap_or_default();
        write(to, &section::splice(&text, begin, end, part))
    };
    splice_into(
        &root.join("BENCHMARKS.md"),
        &bench_path,
        section::BENCH_BEGIN,
        section::BENCH_END,
        &benchmarks_section(Some(run)),
    )?;
    splice_into(
        &root.join(PLAN_PATH),
        &plan_path,
        section::PLAN_BEGIN,
        section::PLAN_END,
        &section::plan_block(Some(run)),
    )?;
    println!(
        "bench scale: wrote {}, {}, {} and {}",
        json_path.display(),
        chart_path.display(),
        bench_path.display(),
        plan_path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sizes_and_minutes_are_checked() {
        let o = options(&strings(&["--sizes", "200,10", "--minutes", "3"])).unwrap();
        assert_eq!((o.sizes, o.minutes), (vec![10, 200], 3));
        assert!(options(&strings(&["--sizes", "1"])).is_err());
        assert!(options(&strings(&["--minutes", "0"])).is_err());
        assert!(options(&strings(&["--bogus"]))
            .unwrap_err()
            .contains("--bogus"));
    }
}
