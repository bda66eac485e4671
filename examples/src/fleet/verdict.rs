//! The simulated verification: how long it takes and what it decides.

use std::time::Duration;

use super::args::Simulation;
use super::rng::Rng;

/// What one simulated verification ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The rollout passed.
    Pass,
    /// The rollout failed verification.
    Fail,
    /// The verifier itself failed (an HTTP 500): a failed verification.
    HandlerError,
}

impl Outcome {
    /// The bounded `reason` label it is counted under: `passed`, `failed`
    /// or `verifier_error`.
    pub fn reason(self) -> &'static str {
        match self {
            Outcome::Pass => "passed",
            Outcome::Fail => "failed",
            Outcome::HandlerError => "verifier_error",
        }
    }
}

/// Draws the work time and outcome of one verification: `pass_ratio` of them
/// pass, `error_ratio` error, the rest fail.
pub fn draw(rng: &mut Rng, sim: &Simulation) -> (Duration, Outcome) {
    let work = rng.delay(sim.verify_ms);
    let u = rng.unit();
    let outcome = if u < sim.pass_ratio {
        Outcome::Pass
    } else if u < sim.pass_ratio + sim.error_ratio {
        Outcome::HandlerError
    } else {
        Outcome::Fail
    };
    (work, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::args::{parse, Command};

    #[test]
    fn ratios_hold_over_many_draws() {
        let args: Vec<String> = [
            "server",
            "--name",
            "s",
            "--pass-ratio",
            "0.6",
            "--error-ratio",
            "0.1",
        ]
        .map(String::from)
        .to_vec();
        let Ok(Command::Server(cfg)) = parse(&args) else {
            panic!("not a server");
        };
        let mut rng = Rng::for_stream(1, 1);
        let n = 20_000;
        let (mut pass, mut err) = (0, 0);
        for _ in 0..n {
            match draw(&mut rng, &cfg.simulation).1 {
                Outcome::Pass => pass += 1,
                Outcome::HandlerError => err += 1,
                Outcome::Fail => {}
            }
        }
        assert!((pass as f64 / n as f64 - 0.6).abs() < 0.02, "{pass}");
        assert!((err as f64 / n as f64 - 0.1).abs() < 0.01, "{err}");
    }
}
