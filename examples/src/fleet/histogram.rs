//! Duration histograms on the catalogue's boundaries: recorded locally, read
//! back from a Prometheus text exposition, merged, and turned into quantiles
//! the way PromQL's `histogram_quantile` does.

use gym_metrics_api::backend::Instrument;
use serde::{Deserialize, Serialize};

/// Per-bucket (not cumulative) counts on the default boundaries, the last one
/// being the `+Inf` bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buckets(pub Vec<u64>);

impl Default for Buckets {
    fn default() -> Self {
        Self(vec![
            0;
            Instrument::DEFAULT_DURATION_BOUNDARIES_MS.len() + 1
        ])
    }
}

impl Buckets {
    /// Counts one value, in milliseconds.
    pub fn record(&mut self, ms: f64) {
        let i = Instrument::DEFAULT_DURATION_BOUNDARIES_MS.partition_point(|&b| b < ms);
        if let Some(c) = self.0.get_mut(i) {
            *c += 1;
        }
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &Buckets) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += b;
        }
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The `q`-quantile in milliseconds, interpolated linearly within its
    /// bucket (the first bucket starts at 0; a quantile in `+Inf` reads as the
    /// highest finite bound). `None` when nothing was counted.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total as f64;
        let mut below = 0u64;
        for (i, &count) in self.0.iter().enumerate() {
            if count > 0 && (below + count) as f64 >= rank {
                let Some(&upper) = Instrument::DEFAULT_DURATION_BOUNDARIES_MS.get(i) else {
                    return Instrument::DEFAULT_DURATION_BOUNDARIES_MS.last().copied();
                };
                let lower = if i == 0 {
                    0.0
                } else {
                    Instrument::DEFAULT_DURATION_BOUNDARIES_MS[i - 1]
                };
                let within = (rank - below as f64) / count as f64;
                return Some(lower + (upper - lower) * within);
            }
            below += count;
        }
        Instrument::DEFAULT_DURATION_BOUNDARIES_MS.last().copied()
    }

    /// Reads the histogram `family` (e.g. `gym_verify_duration_ms_milliseconds`)
    /// from a text exposition. `None` when it is absent or not on the default
    /// boundaries.
    pub fn from_exposition(text: &str, family: &str) -> Option<Self> {
        let prefix = format!("{family}_bucket{{");
        let mut cumulative: Vec<(f64, u64)> = text
            .lines()
            .filter(|line| line.starts_with(&prefix))
            .filter_map(|line| {
                let le = line.split("le=\"").nth(1)?.split('"').next()?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                let value: f64 = line.rsplit(' ').next()?.parse().ok()?;
                Some((le, value as u64))
            })
            .collect();
        cumulative.sort_by(|a, b| a.0.total_cmp(&b.0));
        let bounds: Vec<f64> = cumulative.iter().map(|(le, _)| *le).collect();
        let finite = &bounds[..bounds.len().saturating_sub(1)];
        if finite != Instrument::DEFAULT_DURATION_BOUNDARIES_MS
            || bounds.last() != Some(&f64::INFINITY)
        {
            return None;
        }
        let mut previous = 0;
        let counts = cumulative
            .iter()
            .map(|&(_, c)| {
                let here = c.saturating_sub(previous);
                previous = c;
                here
            })
            .collect();
        Some(Self(counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_within_buckets() {
        let mut b = Buckets::default();
        assert_eq!(b.quantile(0.5), None);
        for _ in 0..50 {
            b.record(50.0); // bucket (0, 100]
        }
        for _ in 0..50 {
            b.record(300.0); // bucket (250, 500]
        }
        assert_eq!(b.quantile(0.5), Some(100.0));
        assert_eq!(b.quantile(0.75), Some(375.0));
        b.record(1e9);
        assert_eq!(b.quantile(1.0), Some(3_600_000.0));
    }

    #[test]
    fn reads_a_prometheus_exposition() {
        let mut text = String::from("# TYPE x histogram\n");
        let mut cumulative = 0;
        for (i, le) in Instrument::DEFAULT_DURATION_BOUNDARIES_MS
            .iter()
            .enumerate()
        {
            cumulative += u64::from(i < 2);
            text.push_str(&format!(
                "x_bucket{{otel_scope_name=\"gym-metrics\",le=\"{le}\"}} {cumulative}\n"
            ));
        }
        text.push_str("x_bucket{otel_scope_name=\"gym-metrics\",le=\"+Inf\"} 3\nx_sum 1\n");
        let b = Buckets::from_exposition(&text, "x").unwrap();
        assert_eq!(b.total(), 3);
        assert_eq!(&b.0[..3], &[1, 1, 0]);
        assert_eq!(b.0[15], 1);
        assert_eq!(Buckets::from_exposition(&text, "y"), None);
    }
}
