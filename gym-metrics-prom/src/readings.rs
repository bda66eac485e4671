//! One scrape's values: every shard summed once, so that all the families
//! of a scrape show the same instant.

use gym_metrics_kit::process::ProcessReading;
use gym_metrics_kit::VerifyCounts;

use crate::fleet_gauge::FleetGauge;
use crate::gym_metrics::GymMetrics;
use crate::http_histogram::HttpSeriesKey;
use crate::sharded_histogram::HistogramSnapshot;

/// One HTTP series: its attribute labels (sorted by name) and its counts.
pub(crate) type HttpSeries = (Vec<(&'static str, &'static str)>, HistogramSnapshot);

/// The values of one scrape.
#[derive(Debug)]
pub(crate) struct Readings {
    pub(crate) rollouts: HistogramSnapshot,
    /// The rollout histogram's count (summed once, read twice).
    pub(crate) rollout_count: u64,
    pub(crate) verifications: HistogramSnapshot,
    /// The verify counters: the verify histogram's count and successes, so
    /// the counters, the rate and the histogram always agree.
    pub(crate) verify_counts: VerifyCounts,
    /// `None` before the first write, and always for a role without the gauge.
    pub(crate) servers_active: Option<u64>,
    /// HTTP series in label-value order.
    pub(crate) http: Vec<HttpSeries>,
    /// This process's values, when the process families are on and `/proc`
    /// could be read.
    pub(crate) process: Option<ProcessReading>,
}

impl Readings {
    /// Sums the shards of `m`, and reads the process's values if `process`.
    pub(crate) fn take(m: &GymMetrics, process: bool) -> Self {
        let rollouts = m.rollout_duration.snapshot();
        // One pass over the verify shards gives the histogram, both counters
        // and the rate, all from the same instant.
        let verifications = m.verify_duration.snapshot();
        let verify_counts = VerifyCounts {
            completed: verifications.count(),
            succeeded: verifications.successes,
        };
        let mut http: Vec<HttpSeries> = m
            .http_server_duration
            .snapshot()
            .into_iter()
            .map(|(key, counts)| (HttpSeriesKey::labels(&key), counts))
            .collect();
        // As the `prometheus` registry's `gather` sorts metrics: by label
        // count, then value by value.
        http.sort_by(|(a, _), (b, _)| {
            a.len()
                .cmp(&b.len())
                .then_with(|| a.iter().map(|l| l.1).cmp(b.iter().map(|l| l.1)))
        });
        Self {
            rollout_count: rollouts.count(),
            rollouts,
            verifications,
            verify_counts,
            servers_active: m.servers_active.as_ref().and_then(FleetGauge::get),
            http,
            process: if process {
                crate::process_families::read()
            } else {
                None
            },
        }
    }
}
