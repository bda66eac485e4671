//! `cargo xtask bench build-cost [--only NAME]... [--jobs N]`: what each
//! backend, and each peer a user might pick instead, costs a user's build
//! (issue #29 §4). For a minimal consumer of each ([`variants::VARIANTS`]),
//! generated under `target/build-cost/<variant>/` as a workspace of its own
//! with our `Cargo.lock` (so that it builds our versions): its unique normal
//! dependencies, a cold `cargo build --release` (every crate downloaded
//! beforehand, an empty target folder, the consumer's own default release
//! profile, cargo's default jobs unless `--jobs`), and the binary's size.
//! Prints the table and writes it into `BENCHMARKS.md` between [`START`] and
//! [`END`]. `--only` (repeatable) measures the variants whose name contains it.

mod variants;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::step::{cargo, target_dir, workspace_root};
use variants::{Variant, VARIANTS};

/// Opens the section in `BENCHMARKS.md`.
const START: &str = "<!-- build-cost:start -->";
/// Closes the section in `BENCHMARKS.md`.
const END: &str = "<!-- build-cost:end -->";

/// What the command line asked for.
struct Options {
    /// Name fragments; empty: every variant.
    only: Vec<String>,
    /// `cargo build --jobs`; `None`: cargo's default.
    jobs: Option<u32>,
}

/// One measured variant.
struct Row {
    /// The consumer measured.
    variant: &'static Variant,
    /// Its unique normal dependencies.
    deps: usize,
    /// Its cold release build, seconds.
    seconds: f64,
    /// Its release binary, bytes.
    bytes: u64,
}

/// Parses `--only NAME` (repeatable) and `--jobs N`.
fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        only: Vec::new(),
        jobs: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .ok_or(format!("build-cost: {arg} needs a value"));
        match arg.as_str() {
            "--only" => o.only.push(value?.clone()),
            "--jobs" => {
                let jobs = value?.parse().ok().filter(|n| *n > 0);
                o.jobs = Some(jobs.ok_or("build-cost: --jobs needs a positive number")?);
            }
            other => {
                return Err(format!(
                    "build-cost: unknown argument {other:?} (--only NAME, --jobs N)"
                ))
            }
        }
    }
    Ok(o)
}

/// `cargo <args>` in the consumer `dir` as a user's plain build runs it:
/// its own target folder, and none of this process's settings of jobs,
/// profiles, flags or wrappers.
fn consumer_cargo(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = cargo();
    cmd.current_dir(dir).args(args);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let plain = [
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTC_WRAPPER",
            "RUSTC_WORKSPACE_WRAPPER",
            "CARGO_INCREMENTAL",
        ];
        if key.starts_with("CARGO_BUILD_")
            || key.starts_with("CARGO_PROFILE_")
            || plain.contains(&key.as_ref())
        {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.env("CARGO_TARGET_DIR", dir.join("target"));
    cmd
}

/// Writes the consumer `v` into `dir`: manifest, program and our lock file.
fn write_consumer(v: &Variant, dir: &Path) -> Result<(), String> {
    let root = workspace_root();
    let deps = v.deps.replace("{root}", &root.display().to_string());
    let manifest = format!(
        "[package]\nname = \"bc-{}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         # A crate of its own, not a member of gym-metrics' workspace.\n[workspace]\n\n[dependencies]\n{deps}\n",
        v.name
    );
    let err = |e: std::io::Error| format!("writing the consumer {}: {e}", dir.display());
    std::fs::create_dir_all(dir.join("src")).map_err(err)?;
    std::fs::write(dir.join("Cargo.toml"), manifest).map_err(err)?;
    std::fs::write(dir.join("src/main.rs"), v.program.join("\n") + "\n").map_err(err)?;
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).map_err(err)?;
    Ok(())
}

/// The distinct crates (name and version) of `cargo tree --prefix none`
/// output, less the root on its first line. A crate reached by several paths
/// is printed once per path (marked ` (*)` after the first); a path package
/// carries its folder, a proc-macro ` (proc-macro)`.
fn unique_deps(tree: &str) -> usize {
    let id = |line: &str| {
        let mut words = line.split_whitespace();
        Some((words.next()?.to_string(), words.next()?.to_string()))
    };
    let mut lines = tree.lines();
    let root = lines.next().and_then(id);
    let mut crates: BTreeSet<_> = lines.filter_map(id).collect();
    if let Some(root) = root {
        crates.remove(&root);
    }
    crates.len()
}

/// Generates, fetches, counts and builds the consumer `v`.
fn measure(v: &'static Variant, jobs: Option<u32>) -> Result<Row, String> {
    let dir = target_dir().join("build-cost").join(v.name);
    write_consumer(v, &dir)?;
    super::status(
        &format!("{}: fetch", v.name),
        consumer_cargo(&dir, &["fetch"]),
    )?;
    let tree = consumer_cargo(&dir, &["tree", "-e", "normal", "--prefix", "none"])
        .output()
        .map_err(|e| format!("{}: cargo tree: {e}", v.name))?;
    if !tree.status.success() {
        return Err(format!(
            "{}: cargo tree: {}",
            v.name,
            String::from_utf8_lossy(&tree.stderr)
        ));
    }
    let deps = unique_deps(&String::from_utf8_lossy(&tree.stdout));
    let _ = std::fs::remove_dir_all(dir.join("target"));
    let mut build = consumer_cargo(&dir, &["build", "--release"]);
    if let Some(jobs) = jobs {
        build.args(["--jobs", &jobs.to_string()]);
    }
    let start = Instant::now();
    super::status(&format!("{}: cold release build", v.name), build)?;
    let seconds = start.elapsed().as_secs_f64();
    let binary = dir.join("target/release").join(format!("bc-{}", v.name));
    let bytes = std::fs::metadata(&binary)
        .map_err(|e| format!("{}: {e}", binary.display()))?
        .len();
    // A few hundred MB each; the figures are taken.
    let _ = std::fs::remove_dir_all(dir.join("target"));
    Ok(Row {
        variant: v,
        deps,
        seconds,
        bytes,
    })
}

/// The Markdown table of `rows`.
fn table(rows: &[Row]) -> String {
    let mut t = String::from(
        "| variant | unique deps | cold release build (s) | binary (MB) |\n|---|--:|--:|--:|\n",
    );
    for r in rows {
        let mb = r.bytes as f64 / 1e6;
        let _ = writeln!(
            t,
            "| `{}`: {} | {} | {:.1} | {mb:.2} |",
            r.variant.name, r.variant.what, r.deps, r.seconds
        );
    }
    t
}

/// The whole section, markers included: what is measured, how, where, then the table.
fn section(
    command: &str,
    partial: bool,
    jobs: Option<u32>,
    machine: &[String],
    table: &str,
) -> String {
    let jobs = jobs.map_or_else(
        || "cargo's default number of jobs (one per logical core)".to_string(),
        |n| format!("`--jobs {n}`"),
    );
    let partial = if partial {
        " **A partial run: only the variants named.**"
    } else {
        ""
    };
    let machine: String = machine.iter().map(|l| format!("- {l}\n")).collect();
    format!(
        "{START}\n## Build cost\n\nWritten by `{command}` on {}.{partial} Each row is a minimal consumer (a `main` that registers one histogram, records one observation and renders, serves or exports it: `xtask/src/bench/build_cost/variants.rs`), generated as a crate of its own with this repository's `Cargo.lock`, so that it builds the versions measured elsewhere in this report. *Unique deps*: the distinct crates (name and version) that `cargo tree -e normal` lists for this platform, the consumer itself left out: normal dependencies only, no build or dev dependencies. *Cold release build*: the wall time of `cargo build --release` into an empty target folder, every crate already downloaded, with the consumer's own default release profile (no LTO: what a user's plain build gets) and {jobs}. *Binary*: the release executable's size in MB (10^6 bytes), as that profile leaves it.\n\n{machine}\n{table}{END}\n",
        super::now_utc()
    )
}

/// `doc` with its section (markers included) replaced by `section`; `section` appended when the markers are missing.
fn splice(doc: &str, section: &str) -> String {
    match (doc.find(START), doc.find(END)) {
        (Some(s), Some(e)) if s < e => format!(
            "{}{}{}",
            &doc[..s],
            section.trim_end(),
            &doc[e + END.len()..]
        ),
        _ => format!("{}\n\n{}\n", doc.trim_end(), section.trim_end()),
    }
}

/// `report` (a freshly written `BENCHMARKS.md`) with the build-cost section
/// `old` holds, so that a record-path run keeps the last build-cost run.
pub fn carry_over(old: &str, report: String) -> String {
    match (old.find(START), old.find(END)) {
        (Some(s), Some(e)) if s < e => splice(&report, &old[s..e + END.len()]),
        _ => report,
    }
}

/// Measures the chosen variants, prints the table and writes the section.
pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let chosen = VARIANTS
        .iter()
        .filter(|v| o.only.is_empty() || o.only.iter().any(|s| v.name.contains(s.as_str())));
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for v in chosen {
        match measure(v, o.jobs) {
            Ok(row) => rows.push(row),
            Err(e) => failed.push(e),
        }
    }
    if rows.is_empty() && failed.is_empty() {
        return Err(format!("build-cost: no variant matches {:?}", o.only));
    }
    let table = table(&rows);
    println!("\n{table}");
    let command = ["cargo xtask bench build-cost"]
        .into_iter()
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let machine = super::machine::describe(&super::machine::Cpu::read());
    let path = workspace_root().join("BENCHMARKS.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let section = section(&command, !o.only.is_empty(), o.jobs, &machine, &table);
    std::fs::write(&path, splice(&doc, &section))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("build-cost: wrote {}", path.display());
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("build-cost: {}", failed.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_cost_counts_each_crate_once_without_the_root() {
        let tree = "bc-x v0.1.0 (/w/target/build-cost/x)\n\
                    gym-metrics-api v0.1.0 (/w/gym-metrics-api)\n\
                    log v0.4.22\n\
                    thiserror v2.0.12\n\
                    thiserror-impl v2.0.12 (proc-macro)\n\
                    log v0.4.22 (*)\n\
                    bc-x v0.1.0 (/w/target/build-cost/x) (*)\n\
                    syn v1.0.109\n\
                    syn v2.0.100\n\n";
        assert_eq!(unique_deps(tree), 6);
        assert_eq!(unique_deps(""), 0);
    }

    #[test]
    fn build_cost_section_is_replaced_or_appended() {
        let new = format!("{START}\nnew\n{END}\n");
        let doc = format!("# B\n\n{START}\nold\n{END}\n\n## After\n");
        assert_eq!(
            splice(&doc, &new),
            format!("# B\n\n{START}\nnew\n{END}\n\n## After\n")
        );
        assert_eq!(splice(&splice(&doc, &new), &new), splice(&doc, &new));
        assert_eq!(
            splice("# B\n", &new),
            format!("# B\n\n{START}\nnew\n{END}\n")
        );
    }

    #[test]
    fn build_cost_section_survives_a_record_path_report() {
        let old = format!("# Old\n\n{START}\nrows\n{END}\n");
        let kept = carry_over(&old, "# New\n".to_string());
        assert_eq!(kept, format!("# New\n\n{START}\nrows\n{END}\n"));
        assert_eq!(carry_over("# Old\n", "# New\n".into()), "# New\n");
    }

    #[test]
    fn build_cost_options_and_table() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = options(&args(&["--only", "prom", "--jobs", "1", "--only", "otlp"])).unwrap();
        assert_eq!(
            (o.only, o.jobs),
            (vec!["prom".to_string(), "otlp".to_string()], Some(1))
        );
        assert!(options(&args(&["--jobs", "0"])).is_err());
        assert!(options(&args(&["--only"])).is_err());
        assert!(options(&args(&["--bogus"])).is_err());
        let row = Row {
            variant: &VARIANTS[0],
            deps: 42,
            seconds: 61.04,
            bytes: 2_345_678,
        };
        assert!(table(&[row]).ends_with(
            "| `prom-default`: gym-metrics-prom, default features | 42 | 61.0 | 2.35 |\n"
        ));
    }

    #[test]
    fn build_cost_variant_names_are_unique_and_manifests_complete() {
        let names: BTreeSet<_> = VARIANTS.iter().map(|v| v.name).collect();
        assert_eq!(names.len(), VARIANTS.len());
        for v in &VARIANTS {
            assert!(v.program.concat().contains("fn main()"), "{}", v.name);
            assert!(v.deps.lines().all(|l| l.contains(" = ")), "{}", v.name);
        }
    }
}
