//! The model every family of the exposition is put into before it is
//! written, whatever its source (ours, the process's, the `metrics`
//! bridge's, an application registry's): what a family is ([`Family`]) and
//! what one of its series shows in a scrape ([`Value`]).

use std::borrow::Cow;

use gym_metrics_api::backend::InstrumentKind;

pub(crate) use gym_metrics_kit::recording::ExemplarSample;
use gym_metrics_kit::recording::HistogramSnapshot;
pub(crate) use gym_metrics_kit::recording::{Reading as Native, Side};

/// A series' own labels, sorted by name.
pub(crate) type Labels = Vec<(&'static str, &'static str)>;

/// One HTTP series: its attribute labels and its counts.
pub(crate) type HttpSeries = (Labels, HistogramSnapshot);

/// How the `prometheus` registry's `gather` orders a family's series: by
/// label count, then value by value.
pub(crate) fn gather_order(a: &Labels, b: &Labels) -> std::cmp::Ordering {
    (a.len().cmp(&b.len())).then_with(|| a.iter().map(|l| l.1).cmp(b.iter().map(|l| l.1)))
}

/// The TYPE of a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    /// The catalogue's kind of the same name (the API's name rules are in
    /// its terms).
    #[cfg_attr(
        not(any(feature = "metrics-bridge", feature = "prometheus-registry")),
        allow(dead_code)
    )]
    pub(crate) fn instrument_kind(self) -> InstrumentKind {
        match self {
            Kind::Counter => InstrumentKind::Counter,
            Kind::Gauge => InstrumentKind::Gauge,
            Kind::Histogram => InstrumentKind::Histogram,
        }
    }

    /// The word on the `# TYPE` line.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// One family: everything about it that does not change between scrapes.
#[derive(Debug)]
pub(crate) struct Family {
    /// The family name (for a counter, with `_total`, except perhaps an
    /// application registry's).
    pub(crate) name: String,
    pub(crate) help: Cow<'static, str>,
    pub(crate) kind: Kind,
    /// The labels every sample carries after its series' own: the scope
    /// labels, or `target_info`'s resource labels.
    pub(crate) labels: Vec<(String, String)>,
    /// A histogram's bucket upper bounds, without `+Inf`; empty otherwise.
    pub(crate) bounds: Vec<f64>,
}

/// What one series of a family shows in a scrape.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value<'r> {
    /// An integer value (a counter, the fleet size), written as the
    /// encoders write an `f64` holding it.
    Count(u64),
    /// A float value (the success rate, `target_info`'s 1, a gathered counter).
    Float(f64),
    /// A histogram's value.
    Histogram(Histogram<'r>),
}

/// What one histogram series shows in a scrape.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Histogram<'r> {
    /// Its bucket counts, one per bound, then `+Inf`.
    pub(crate) buckets: Buckets<'r>,
    pub(crate) sum: f64,
    /// Its native buckets, where it keeps them (written in protobuf only).
    pub(crate) native: Option<&'r Native>,
    /// Each bucket's newest exemplar, where kept (empty otherwise; written
    /// in OpenMetrics and protobuf only).
    pub(crate) exemplars: &'r [Option<ExemplarSample>],
}

impl<'r> Histogram<'r> {
    /// Classic buckets and a sum, nothing else.
    pub(crate) fn classic(buckets: Buckets<'r>, sum: f64) -> Self {
        Self {
            buckets,
            sum,
            native: None,
            exemplars: &[],
        }
    }
}

/// A histogram's bucket counts, one per bound and then the `+Inf` one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Buckets<'r> {
    /// Each bucket's own count (the shards' sums).
    PerBucket(&'r [u64]),
    /// Running totals already (a bridged or gathered histogram's).
    #[cfg_attr(
        not(any(feature = "metrics-bridge", feature = "prometheus-registry")),
        allow(dead_code)
    )]
    Cumulative(&'r [u64]),
}

impl<'r> Buckets<'r> {
    /// Running totals, as Prometheus' `le` buckets carry them.
    pub(crate) fn cumulative(self) -> impl Iterator<Item = u64> + 'r {
        let (counts, running) = match self {
            Buckets::PerBucket(counts) => (counts, true),
            Buckets::Cumulative(counts) => (counts, false),
        };
        counts.iter().scan(0u64, move |total, &c| {
            *total = if running { total.wrapping_add(c) } else { c };
            Some(*total)
        })
    }

    /// The histogram's count: the `+Inf` bucket's running total.
    pub(crate) fn count(self) -> u64 {
        self.cumulative().last().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_totals_and_the_count_are_the_same_either_way() {
        let per_bucket = Buckets::PerBucket(&[1, 0, 2, 3]);
        let cumulative = Buckets::Cumulative(&[1, 1, 3, 6]);
        assert!(per_bucket.cumulative().eq(cumulative.cumulative()));
        assert_eq!((per_bucket.count(), cumulative.count()), (6, 6));
        assert_eq!(Buckets::Cumulative(&[]).count(), 0);
    }
}
