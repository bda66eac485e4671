//! The HTTP layer under wrk: `POST /verify` against `http_layer_server`
//! (hyper 1), bare and through each middleware, in alternating rounds (every
//! candidate once per round, the order rotating), so that whatever else the
//! shared machine does lands on every candidate alike; each candidate's
//! figure is the median of its rounds.

use std::path::Path;

use super::wrk::{self, Server};

/// The candidates, as `http_layer_server` names them, and as the report does.
pub const CANDIDATES: [(&str, &str); 4] = [
    ("bare", "bare hyper 1 service"),
    ("ours", "gym-metrics-api HttpServerMetricsLayer (prom)"),
    ("otel", "opentelemetry-instrumentation-tower 0.19"),
    ("axum-prometheus", "axum-prometheus 0.10"),
];

/// Rounds: with 8 rounds per candidate the median resolves a 5 % difference
/// on loopback (round-to-round spread of 2-3 % in quiet conditions).
pub const ROUNDS: usize = 8;

/// wrk's settings for one round: shorter than the `/metrics` run, more rounds.
pub const ARGS: [&str; 3] = ["-t2", "-c32", "-d5s"];

/// The POST every request makes (a wrk Lua script).
pub const SCRIPT: &str = "wrk.method = \"POST\"\nwrk.body = '{\"ok\":true}'\nwrk.headers[\"Content-Type\"] = \"application/json\"\n";

/// One candidate's requests per second, every round.
#[derive(Debug, Clone)]
pub struct Rounds {
    /// As `http_layer_server` names it.
    pub candidate: &'static str,
    /// Requests per second, in round order.
    pub requests_per_sec: Vec<f64>,
}

impl Rounds {
    /// The median of the rounds (`None` without rounds).
    pub fn median(&self) -> Option<f64> {
        median(&self.requests_per_sec)
    }
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The order of round `round`: the candidates rotated by `round`.
pub fn order(round: usize) -> Vec<usize> {
    (0..CANDIDATES.len())
        .map(|i| (i + round) % CANDIDATES.len())
        .collect()
}

/// Runs every round against `server` (the `http_layer_server` binary).
///
/// # Errors
/// A server or wrk could not run.
pub fn run(server: &Path, out: &Path, rounds: usize) -> Result<Vec<Rounds>, String> {
    let script = out.join("post_verify.lua");
    std::fs::write(&script, SCRIPT).map_err(|e| format!("writing {}: {e}", script.display()))?;
    let script = script.display().to_string();
    let mut results: Vec<Rounds> = CANDIDATES
        .iter()
        .map(|(candidate, _)| Rounds {
            candidate,
            requests_per_sec: Vec::new(),
        })
        .collect();
    for round in 0..rounds {
        for i in order(round) {
            let candidate = CANDIDATES[i].0;
            let running = Server::start(server, &[candidate.to_string()], 0)?;
            eprintln!(
                "==> bench: wrk POST {} ({candidate}, round {})",
                running.url,
                round + 1
            );
            let mut args: Vec<&str> = ARGS.to_vec();
            args.extend(["-s", &script]);
            let figures = wrk::run_with(&running.url, &args)?;
            results[i].requests_per_sec.push(figures.requests_per_sec);
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_runs_every_candidate_and_the_order_rotates() {
        for round in 0..ROUNDS {
            let mut o = order(round);
            assert_eq!(o[0], round % CANDIDATES.len());
            o.sort_unstable();
            assert_eq!(o, [0, 1, 2, 3]);
        }
        assert_ne!(order(0), order(1));
    }

    #[test]
    fn the_median_of_the_rounds() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
