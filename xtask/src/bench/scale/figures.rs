//! What one `cargo xtask bench scale` run measured, as kept in
//! `xtask/bench/scale.json`: per fleet size, the per-process costs at each
//! snapshot; and the SD endpoint at synthetic sizes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where a full run keeps its figures, relative to the workspace root.
pub const SCALE_JSON: &str = "xtask/bench/scale.json";

/// The whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleRun {
    /// When it finished (UTC).
    pub finished: String,
    /// The CPU, one line.
    pub machine: String,
    /// The scraper's interval and SD refresh, seconds.
    pub interval_s: f64,
    /// A `--quick` run (figures that check the command, not the fleet).
    pub quick: bool,
    /// One entry per fleet size, smallest first.
    pub sizes: Vec<SizeFigures>,
    /// The SD endpoint holding synthetic target lists, smallest first.
    pub sd_synthetic: Vec<SdCost>,
}

/// One fleet size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeFigures {
    /// Every process: the orchestrator, its servers and agents.
    pub processes: usize,
    /// Resources servers.
    pub servers: usize,
    /// Agents.
    pub agents: usize,
    /// From the launch to the first stored scrape of each process (its own
    /// start time against the scraper's first `up` sample), seconds.
    pub launch_to_first_scrape_s: Stats,
    /// Snapshots, in time order (after 1 minute; after 10 at the long size).
    pub snapshots: Vec<Snapshot>,
}

/// The fleet at one moment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// Seconds since the fleet was launched.
    pub after_s: f64,
    /// Samples per scrape (`scrape_samples_scraped`), by server type.
    pub series: BTreeMap<String, Stats>,
    /// Bytes of one `/metrics` answer, plain, by server type.
    pub exposition_plain: BTreeMap<String, Stats>,
    /// Bytes of one `/metrics` answer with `Accept-Encoding: gzip`, by server type.
    pub exposition_gzip: BTreeMap<String, Stats>,
    /// `scrape_duration_seconds` over the last window, every target, ms.
    pub scrape_ms: Stats,
    /// Resident memory, KiB, by server type (the orchestrator's included).
    pub rss_kib: BTreeMap<String, Stats>,
    /// The orchestrator's CPU over the last window, % of one core.
    pub orchestrator_cpu_pct: f64,
    /// Every process of the fleet together, % of one core.
    pub fleet_cpu_pct: f64,
    /// The scraper (a Prometheus server, storing too: more than an agent
    /// needs) over the last window, % of one core.
    pub scraper_cpu_pct: f64,
    /// The scraper's resident memory, KiB.
    pub scraper_rss_kib: f64,
    /// Samples the scraper took in per second over the last window.
    pub scraped_samples_per_s: f64,
    /// The orchestrator's `GET /sd`.
    pub sd: SdCost,
}

/// `GET /sd` at one list size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SdCost {
    /// Targets listed.
    pub targets: usize,
    /// Body bytes.
    pub bytes: usize,
    /// The body gzip-compressed (level 6), bytes: what it would cost on the
    /// wire compressed.
    pub gzip_bytes: usize,
    /// Request time as a client sees it (a new connection each), ms.
    pub request_ms: Stats,
    /// Rendering the list at publish time, ms (`None`: not measured here).
    pub publish_ms: Option<f64>,
}

/// A distribution's summary.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    /// How many values.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Stats {
    /// The summary of `values` (all zero for none).
    pub fn of(values: &[f64]) -> Self {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(f64::total_cmp);
        let rank = |q: f64| {
            // Nearest rank: the smallest value with at least q of them at or below it.
            let k = (q * v.len() as f64).ceil() as usize;
            v[k.clamp(1, v.len()) - 1]
        };
        Self {
            n: v.len(),
            min: v[0],
            p50: rank(0.5),
            p99: rank(0.99),
            max: v[v.len() - 1],
        }
    }
}

impl ScaleRun {
    /// The run kept at `path`, if there is one that parses.
    pub fn load(path: &std::path::Path) -> Option<Self> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Stats::of(&values);
        assert_eq!(
            (s.n, s.min, s.p50, s.p99, s.max),
            (100, 1.0, 50.0, 99.0, 100.0)
        );
        let one = Stats::of(&[7.0, f64::NAN]);
        assert_eq!((one.n, one.p50, one.p99), (1, 7.0, 7.0));
        assert_eq!(Stats::of(&[]), Stats::default());
    }
}
