//! `cargo xtask <command>`: the project's own automation.
//!
//! - `ci`: everything CI checks (the README's test command).
//! - `tools`: provision Prometheus, promtool, VictoriaMetrics, rotel and vmagent under
//!   `target/tools/`, and cargo-nextest (`--servers`: not the test runner).
//! - `e2e`: only the end-to-end tests against real servers.
//! - `loom`: the model checks of the lock-free shard protocols.
//! - `bench`: the benchmarks side by side with peer libraries.
//! - `dist`: release builds, one per backend.
//! - `msrv`: every library crate in every feature set on Rust 1.85.
//! - `package`: the library crates packed, and an outside consumer of them.
//! - `screenshot`: the fleet's metrics in Prometheus's web UI, by headless Chromium.

mod bench;
mod ci;
mod dist;
mod msrv;
mod newcomer;
mod package;
mod prose;
mod screenshot;
mod step;
mod tools;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "bench" => bench::run(rest),
        "ci" => ci::run(rest),
        "e2e" => ci::e2e(rest),
        "loom" => ci::loom(),
        "tools" => tools::run(rest),
        "dist" => dist::run(rest),
        "msrv" => msrv::run(rest),
        "package" => package::run(rest),
        "screenshot" => screenshot::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci      fmt, clippy and tests for every backend feature set, e2e against real servers
  tools [--servers]
          provision prometheus, promtool, victoria-metrics, rotel and vmagent under
          target/tools/, and cargo-nextest (not with --servers)
  e2e     only the end-to-end tests
  loom    the model checks of the lock-free shard protocols
  bench   benchmarks beside the peer libraries; writes BENCHMARKS.md
  bench build-cost [--only NAME]... [--jobs N]
          what each backend and peer costs a user's build (unique dependencies,
          cold release build, binary size); writes its section of BENCHMARKS.md
  dist    release builds for each backend into target/dist/
  msrv    every library crate in every feature set, checked by trixie's Rust 1.85.1
  package pack the library crates, build them from the packages, and check an
          outside consumer of them on Rust 1.85.1 and run it, once per backend
  screenshot [--out PNG] [--seconds N]
          the fleet's metrics graphed in Prometheus's web UI by headless Chromium
          (deploy/prometheus-ui.png)";
