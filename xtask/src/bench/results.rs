//! Everything one `cargo xtask bench` run measured, before it is written up.

use super::figures::{Doc, Row};
use super::http_wrk::Rounds;
use super::ipc;
use super::wrk::WrkResult;

/// The callgrind build with the Prometheus backend installed: the record
/// path the instruction target is about.
pub const PROM_INSTALLED: &str = "prom installed";

/// The same loop built as an application's `cargo build --release` builds
/// it (no LTO, 16 codegen units), not with this workspace's fat LTO.
pub const PROM_USER_BUILD: &str = "prom installed, user build";

/// The start of the name of our facade's rollout record row.
pub const ROLLOUT: &str = "gym-metrics-prom record_rollout";

/// Our record row, the peer (name and median), the ratio, and the
/// instructions per cycle our median implies.
pub type AgainstPeer = (Option<f64>, Option<(String, f64)>, Option<f64>, Option<f64>);

/// How many processes time the same record loop, one figure each.
pub const PROCESSES: usize = 8;

/// The most the slowest process's record may take over the fastest's.
pub const MAX_PROCESS_SPREAD: f64 = 1.25;

/// Instruction counts of one callgrind loop.
#[derive(Debug, Clone)]
pub struct Count {
    /// Which build: `nothing installed`, `noop backend` or [`PROM_INSTALLED`].
    pub build: &'static str,
    /// `empty`, `rollout` or `verify`.
    pub mode: &'static str,
    /// Instructions in the loop, or why not counted.
    pub instructions: Result<u64, String>,
}

/// Resident memory of one backend.
#[derive(Debug, Clone)]
pub struct Rss {
    /// `prom` or `otel`.
    pub backend: &'static str,
    /// `(KiB after 10,000 records, KiB after the large count, the large count)`.
    pub figures: Result<(u64, u64, u64), String>,
}

/// `/metrics` under wrk.
#[derive(Debug, Clone)]
pub struct Scrape {
    /// The exposition size, bytes (the fixed body has the same).
    pub body_bytes: usize,
    /// Our endpoint.
    pub ours: WrkResult,
    /// The fixed-body hyper server.
    pub fixed: WrkResult,
}

/// One run's results.
#[derive(Debug)]
pub struct Results {
    /// Quick mode: figures prove only that everything runs.
    pub quick: bool,
    /// `record_prom.json`.
    pub record_prom: Doc,
    /// `record_otel.json`.
    pub record_otel: Doc,
    /// `scrape.json`.
    pub scrape: Doc,
    /// `quantiles.json`: Prometheus' quantile estimates beside the exact ones.
    pub quantiles: Doc,
    /// `otel_export.json`.
    pub otel_export: Doc,
    /// `http_layer.json`: one request through each HTTP middleware, no I/O.
    pub http_layer: Doc,
    /// The HTTP middlewares under wrk, every round, or why not run.
    pub http_wrk: Result<Vec<super::http_wrk::Rounds>, String>,
    /// Callgrind counts.
    pub counts: Vec<Count>,
    /// Resident memory.
    pub rss: Vec<Rss>,
    /// wrk, or why it did not run.
    pub wrk: Result<Scrape, String>,
    /// The counting-allocator test's verdict.
    pub no_alloc: Result<(), String>,
    /// Nanoseconds per rollout record, one figure per process
    /// ([`PROCESSES`] of them), or why not measured.
    pub per_process: Result<Vec<f64>, String>,
    /// The machine, one line per fact.
    pub machine: Vec<String>,
    /// The CPU (its clock turns counts and times into instructions per cycle).
    pub cpu: super::machine::Cpu,
    /// The history file's lines, this run's last.
    pub history: Vec<serde_json::Value>,
    /// The last kept `cargo xtask bench scale` run, shown as its section.
    pub scale: Option<super::scale::ScaleRunKept>,
    /// `(crate, version)` measured.
    pub versions: Vec<(String, String)>,
    /// When the run ended (UTC, `date -u` style).
    pub finished: String,
}

impl Results {
    /// Instructions of `(build, mode)`, if counted.
    pub fn count(&self, build: &str, mode: &str) -> Option<u64> {
        self.counts
            .iter()
            .find(|c| c.build == build && c.mode == mode)
            .and_then(|c| c.instructions.as_ref().ok().copied())
    }

    /// Instructions per call of `mode` with the prom backend installed, net
    /// of the empty loop's (the loop counter and the `Duration` argument's
    /// construction stay in: every call site builds one).
    pub fn prom_per_call(&self, mode: &str) -> Option<f64> {
        self.facade_per_call(PROM_INSTALLED, mode)
    }

    /// [`Results::prom_per_call`] in a user's build ([`PROM_USER_BUILD`]).
    pub fn user_per_call(&self, mode: &str) -> Option<f64> {
        self.facade_per_call(PROM_USER_BUILD, mode)
    }

    /// Instructions per call of `mode` in `build`, net of its empty loop.
    fn facade_per_call(&self, build: &str, mode: &str) -> Option<f64> {
        let calls = super::callgrind::CALLS as f64;
        let loop_ = self.count(build, mode)? as f64;
        let empty = self.count(build, "empty")? as f64;
        Some((loop_ - empty) / calls)
    }

    /// Instructions per call of `mode` with the prom backend installed, net
    /// of the loop that builds the same `Duration` and stores it (`duration`):
    /// the record call itself. The baseline's two stores of the black-boxed
    /// `Duration` stay in it, so this may understate the call by up to two.
    pub fn prom_record_per_call(&self, mode: &str) -> Option<f64> {
        let calls = super::callgrind::CALLS as f64;
        let loop_ = self.count(PROM_INSTALLED, mode)? as f64;
        let duration = self.count(PROM_INSTALLED, "duration")? as f64;
        Some((loop_ - duration) / calls)
    }

    /// The per-process times as the targets' table shows them, and whether
    /// the slowest stays within [`MAX_PROCESS_SPREAD`] of the fastest.
    pub fn process_spread(&self) -> (String, Option<bool>) {
        let times = match &self.per_process {
            Ok(times) if !times.is_empty() => times,
            Ok(_) => return ("not measured: no process".into(), None),
            Err(e) => return (format!("not measured: {e}"), None),
        };
        let (low, high) = times
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &t| (l.min(t), h.max(t)));
        let each: Vec<String> = times.iter().map(|t| format!("{t:.2}")).collect();
        let spread = high / low;
        let text = format!("{spread:.2}x ({} ns)", each.join(" / "));
        (text, Some(spread <= MAX_PROCESS_SPREAD))
    }

    /// Our rollout record with `threads` against the fastest peer.
    pub fn against_peer(&self, threads: &str) -> AgainstPeer {
        let ours = self.record_prom.median(threads, ROLLOUT);
        let peer = self.record_prom.fastest_peer(threads);
        let q = ratio(ours, peer.as_ref().map(|p| p.1));
        let n = self.prom_per_call("rollout");
        (ours, peer, q, ipc::implied(n, ours, self.cpu.clock_mhz()))
    }

    /// For a record-path row of ours (the facade with the prom backend),
    /// callgrind's instructions per call and the instructions per cycle its
    /// median implies.
    pub fn row_ipc(&self, row: &Row) -> (Option<f64>, Option<f64>) {
        let ours = |mode: &str| {
            row.name
                .starts_with(&format!("gym-metrics-prom record_{mode}"))
        };
        let mode = ["rollout", "verify"].into_iter().find(|m| ours(m));
        let n = mode.and_then(|m| self.prom_per_call(m));
        (n, ipc::implied(n, row.median_ns, self.cpu.clock_mhz()))
    }

    /// Render time ours to `prometheus-client`'s, and a record while
    /// scraping to idle.
    pub fn scrape_ratios(&self) -> (Option<f64>, Option<f64>) {
        let render = |k: &str| self.scrape.median("render", k);
        let g = |k: &str| {
            self.scrape
                .num(&format!("/record_while_scraping/{k}_median_ns"))
        };
        let ours = ratio(render("gym-metrics-prom"), render("prometheus-client"));
        (ours, ratio(g("scraping"), g("idle")))
    }

    /// The HTTP micro-benchmark: the bare service's median, our metric work
    /// (our median less the bare one) and the fastest peer middleware's.
    pub fn http_work(&self) -> (Option<f64>, Option<f64>, Option<f64>) {
        let rows = self.http_layer.rows("threads_1");
        let m = |p: &str| {
            rows.iter()
                .find(|r| r.name.starts_with(p))
                .and_then(|r| r.median_ns)
        };
        let (bare, ours) = (m("bare"), m("gym-metrics"));
        let peer = |r: &&Row| !r.name.starts_with("bare") && !r.name.starts_with("gym-metrics");
        let work = rows
            .iter()
            .filter(peer)
            .filter_map(|r| Some(r.median_ns? - bare?));
        (
            bare,
            ours.zip(bare).map(|(o, b)| o - b),
            work.min_by(f64::total_cmp),
        )
    }

    /// Our layer's throughput to bare under wrk (see [`paired_throughput_ratio`]).
    pub fn http_throughput_ratio(&self) -> Option<f64> {
        let rounds = self.http_wrk.as_ref().ok()?;
        paired_throughput_ratio(rounds, "ours")
    }
}

/// `a / b`, when both are measured and `b` is positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b)
}

/// `candidate`'s throughput to bare: the median over the rounds of the
/// ratio within each round, so that drift from one round to the next (the
/// machine is shared) cancels.
pub fn paired_throughput_ratio(rounds: &[Rounds], candidate: &str) -> Option<f64> {
    let of = |name: &str| rounds.iter().find(|c| c.candidate == name);
    let (ours, bare) = (of(candidate)?, of("bare")?);
    let pairs = ours.requests_per_sec.iter().zip(&bare.requests_per_sec);
    let ratios: Vec<f64> = pairs
        .filter(|(_, b)| **b > 0.0)
        .map(|(o, b)| o / b)
        .collect();
    super::http_wrk::median(&ratios)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_round_ratios_cancel_the_drift_between_rounds() {
        // The machine's speed halves from round to round; ours is 0.98x bare in each.
        let bare = vec![100_000.0, 50_000.0, 25_000.0];
        let rounds = vec![
            Rounds {
                candidate: "bare",
                requests_per_sec: bare.clone(),
            },
            Rounds {
                candidate: "ours",
                requests_per_sec: bare.iter().map(|b| b * 0.98).collect(),
            },
        ];
        let q = paired_throughput_ratio(&rounds, "ours").unwrap();
        assert!((q - 0.98).abs() < 1e-9, "{q}");
        assert_eq!(paired_throughput_ratio(&rounds, "otel"), None);
    }
}
