//! `gym-fleet`: launches a small real gym fleet on loopback (resources servers
//! and agents talking HTTP) that records every gym metric. See `--help`.

use std::process::ExitCode;

use gym_metrics_examples::fleet::args::{self, Command, USAGE};
use gym_metrics_examples::fleet::{agent, child, orchestrator, server};
use gym_metrics_examples::logging;

fn main() -> ExitCode {
    // First, so that nothing a library warns about is lost; children inherit
    // RUST_LOG, and the orchestrator prints their standard error.
    if let Err(e) = logging::init() {
        eprintln!("gym-fleet: {e}");
        return ExitCode::from(2);
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let command = match args::parse(&argv) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(command) => command,
        Err(e) => {
            eprintln!("gym-fleet: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match child::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gym-fleet: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (who, result) = match command {
        Command::Orchestrate(cfg) => (
            "gym-fleet".to_string(),
            runtime.block_on(orchestrator::run(cfg)),
        ),
        Command::Server(cfg) => (cfg.name.clone(), runtime.block_on(server::run(cfg))),
        Command::Agent(cfg) => (cfg.name.clone(), runtime.block_on(agent::run(cfg))),
        Command::Help => ("gym-fleet".to_string(), Ok(())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::FAILURE
        }
    }
}
