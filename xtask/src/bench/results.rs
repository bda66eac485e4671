//! Everything one `cargo xtask bench` run measured, before it is written up.

use super::figures::Doc;
use super::wrk::WrkResult;

/// The callgrind build with the Prometheus backend installed: the record
/// path the instruction target is about.
pub const PROM_INSTALLED: &str = "prom installed";

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
        let calls = super::callgrind::CALLS as f64;
        let loop_ = self.count(PROM_INSTALLED, mode)? as f64;
        let empty = self.count(PROM_INSTALLED, "empty")? as f64;
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
}
