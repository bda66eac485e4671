//! The `metrics` crate bridged into a backend (feature `metrics-bridge`),
//! written once for both: the options an application sets (histogram
//! boundaries by name or prefix, the per-instrument cardinality limit) and
//! their documented defaults, the UCUM unit each `metrics::Unit` stands for,
//! the one name rule ([`FamilyNames`]) deciding which `metrics` names are
//! exported, and the bridge itself: the [`Instruments`] registered and
//! series with the cardinality cap, and the [`MetricsBridgeRecorder`], over
//! a backend's [`Storage`]. So one rule gives the same names, buckets,
//! limits and units on the Prometheus and the OpenTelemetry path.

mod cells;
mod instruments;
mod names;
mod recorder;
mod storage;

pub use cells::{CounterCell, CounterSink, GaugeCell, HistogramCell, MAX_HISTOGRAM_VALUE};
pub use instruments::{Bridged, Instruments};
pub use names::{bridged_family_name, gym_families, sample_names, FamilyNames, NameRefused};
pub use recorder::{MetricsBridgeRecorder, MetricsBridgeStats, MetricsRecorderTaken};
pub use storage::{InstrumentSpec, Labels, Series, SeriesLabels, Storage};

use gym_metrics_api::backend::{Boundaries, BoundariesError};

/// The boundaries of a `metrics` histogram no rule matches: the OpenTelemetry
/// SDK's default explicit bucket boundaries, so that both paths agree
/// without any configuration.
pub const DEFAULT_HISTOGRAM_BOUNDS: [f64; 15] = [
    0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0, 7500.0,
    10000.0,
];

/// The default number of label sets one instrument may hold before further
/// ones are recorded into its one overflow series (`otel_metric_overflow="true"`),
/// as the OpenTelemetry SDK's default.
pub const DEFAULT_CARDINALITY_LIMIT: usize = 2000;

/// The default most bytes one series' labels may hold, keys and values as
/// recorded: a label set over it is recorded into its instrument's overflow
/// series. Label sets are identities (a queue, a model, a provider), not
/// payloads; 1 KiB holds a dozen ordinary labels.
pub const DEFAULT_SERIES_LABEL_BYTES_LIMIT: usize = 1024;

/// The default most bytes all bridged series together may write in one
/// exposition (see [`MetricsBridgeOptions::bytes_limit`] for how a series
/// is counted): 8 MiB, a large scrape; a new label set past it is recorded
/// into its instrument's overflow series.
pub const DEFAULT_BYTES_LIMIT: usize = 8 << 20;

/// The default most bridged instruments: 1,000 (a Prometheus family each;
/// on the OpenTelemetry path, one per `metrics` name). Further names are
/// refused, counted in [`MetricsBridgeStats::refused`].
pub const DEFAULT_FAMILY_LIMIT: usize = 1000;

/// The longest `metrics` name bridged, in bytes, as OpenTelemetry's
/// instrument name rule: a longer one is refused on both paths.
pub const MAX_NAME_BYTES: usize = 255;

/// The longest description kept, in bytes: a longer one is cut at a
/// character boundary (a family's `# HELP` is a line, not a document).
pub const MAX_HELP_BYTES: usize = 1024;

/// The bytes counted for a sample line besides its family name and labels
/// (the scope label, braces, quotes, the value): see
/// [`MetricsBridgeOptions::bytes_limit`].
pub const SAMPLE_OVERHEAD_BYTES: usize = 64;

/// Which `metrics` names a bucket rule applies to (the name as recorded,
/// before any translation), as `metrics-exporter-prometheus`' `Matcher`.
///
/// ```
/// use gym_metrics_kit::bridge::HistogramMatcher;
/// assert!(HistogramMatcher::Prefix("db.".into()).matches("db.query.duration"));
/// assert!(!HistogramMatcher::Full("db".into()).matches("db.query.duration"));
/// assert!(HistogramMatcher::Suffix(".bytes".into()).matches("http.body.bytes"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistogramMatcher {
    /// The whole name.
    Full(String),
    /// Names starting with this.
    Prefix(String),
    /// Names ending with this.
    Suffix(String),
}

impl HistogramMatcher {
    /// Whether `name` is one this rule applies to.
    ///
    /// ```
    /// use gym_metrics_kit::bridge::HistogramMatcher;
    /// assert!(HistogramMatcher::Full("a".into()).matches("a"));
    /// ```
    pub fn matches(&self, name: &str) -> bool {
        match self {
            HistogramMatcher::Full(full) => name == full,
            HistogramMatcher::Prefix(prefix) => name.starts_with(prefix.as_str()),
            HistogramMatcher::Suffix(suffix) => name.ends_with(suffix.as_str()),
        }
    }
}

/// How a backend bridges the `metrics` crate: bucket rules, the
/// cardinality limit and the byte budgets (a series' label bytes, all
/// series' bytes, the number of instruments). Rules are tried in the order they were added; the
/// first that matches wins, else [`DEFAULT_HISTOGRAM_BOUNDS`].
///
/// ```
/// use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
/// let options = MetricsBridgeOptions::new()
///     .histogram_buckets(HistogramMatcher::Prefix("db.".into()), vec![0.001, 0.01, 0.1])?
///     .cardinality_limit(100);
/// assert_eq!(options.buckets_for("db.query").as_slice(), &[0.001, 0.01, 0.1]);
/// assert_eq!(options.buckets_for("other").as_slice().len(), 15);
/// assert_eq!(options.limit(), 100);
/// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsBridgeOptions {
    rules: Vec<(HistogramMatcher, Boundaries)>,
    cardinality_limit: usize,
    series_label_bytes_limit: usize,
    bytes_limit: usize,
    family_limit: usize,
}

impl Default for MetricsBridgeOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl MetricsBridgeOptions {
    /// No bucket rule, the limits [`DEFAULT_CARDINALITY_LIMIT`],
    /// [`DEFAULT_SERIES_LABEL_BYTES_LIMIT`], [`DEFAULT_BYTES_LIMIT`] and
    /// [`DEFAULT_FAMILY_LIMIT`].
    ///
    /// ```
    /// let f = gym_metrics_kit::bridge::MetricsBridgeOptions::new();
    /// assert_eq!(f.limit(), 2000);
    /// assert_eq!(f.max_families(), 1000);
    /// ```
    pub fn new() -> Self {
        Self {
            rules: Vec::new(),
            cardinality_limit: DEFAULT_CARDINALITY_LIMIT,
            series_label_bytes_limit: DEFAULT_SERIES_LABEL_BYTES_LIMIT,
            bytes_limit: DEFAULT_BYTES_LIMIT,
            family_limit: DEFAULT_FAMILY_LIMIT,
        }
    }

    /// Histograms whose name `matcher` matches get these upper bounds (in
    /// the unit the histogram records in).
    ///
    /// # Errors
    /// [`BoundariesError`] if `bounds` is empty, not finite or not strictly increasing.
    ///
    /// ```
    /// use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
    /// let bad = MetricsBridgeOptions::new().histogram_buckets(HistogramMatcher::Full("a".into()), vec![2.0, 1.0]);
    /// assert!(bad.is_err());
    /// ```
    pub fn histogram_buckets(
        mut self,
        matcher: HistogramMatcher,
        bounds: Vec<f64>,
    ) -> Result<Self, BoundariesError> {
        self.rules.push((matcher, Boundaries::new(bounds)?));
        Ok(self)
    }

    /// At most `limit` label sets per instrument (at least 1: 0 is taken
    /// as 1); measurements with a further label set go to the instrument's
    /// overflow series.
    ///
    /// ```
    /// let f = gym_metrics_kit::bridge::MetricsBridgeOptions::new().cardinality_limit(0);
    /// assert_eq!(f.limit(), 1);
    /// ```
    pub fn cardinality_limit(mut self, limit: usize) -> Self {
        self.cardinality_limit = limit.max(1);
        self
    }

    /// A label set whose keys and values (as recorded) hold more than
    /// `bytes` bytes is recorded into its instrument's overflow series
    /// (counted in [`MetricsBridgeStats::overflowed`], logged once).
    ///
    /// ```
    /// let f = gym_metrics_kit::bridge::MetricsBridgeOptions::new().series_label_bytes_limit(4096);
    /// assert_eq!(f.max_series_label_bytes(), 4096);
    /// ```
    pub fn series_label_bytes_limit(mut self, bytes: usize) -> Self {
        self.series_label_bytes_limit = bytes;
        self
    }

    /// The most bytes one series' labels may hold.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::MetricsBridgeOptions::new().max_series_label_bytes(), 1024);
    /// ```
    pub fn max_series_label_bytes(&self) -> usize {
        self.series_label_bytes_limit
    }

    /// All bridged series together write at most about `bytes` bytes per
    /// exposition: each series is counted, when it is made, as its sample
    /// lines (one; a histogram's, one per bucket and `_sum` and `_count`)
    /// times its family name, its labels' names and values, and
    /// [`SAMPLE_OVERHEAD_BYTES`]. A new label set that would pass it is
    /// recorded into its instrument's overflow series (counted in
    /// [`MetricsBridgeStats::overflowed`], logged once); a series without
    /// labels and the overflow series are always made (at most two per
    /// instrument, bounded by [`MetricsBridgeOptions::family_limit`]).
    ///
    /// ```
    /// let f = gym_metrics_kit::bridge::MetricsBridgeOptions::new().bytes_limit(1 << 20);
    /// assert_eq!(f.max_bytes(), 1 << 20);
    /// ```
    pub fn bytes_limit(mut self, bytes: usize) -> Self {
        self.bytes_limit = bytes;
        self
    }

    /// The bytes all bridged series may write.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::MetricsBridgeOptions::new().max_bytes(), 8 << 20);
    /// ```
    pub fn max_bytes(&self) -> usize {
        self.bytes_limit
    }

    /// At most `limit` bridged instruments (at least 1): a Prometheus family
    /// each, and on the OpenTelemetry path one per `metrics` name. A name
    /// that would make one more is refused (counted in
    /// [`MetricsBridgeStats::refused`], logged once).
    ///
    /// ```
    /// let f = gym_metrics_kit::bridge::MetricsBridgeOptions::new().family_limit(0);
    /// assert_eq!(f.max_families(), 1);
    /// ```
    pub fn family_limit(mut self, limit: usize) -> Self {
        self.family_limit = limit.max(1);
        self
    }

    /// The most bridged instruments.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::MetricsBridgeOptions::new().max_families(), 1000);
    /// ```
    pub fn max_families(&self) -> usize {
        self.family_limit
    }

    /// The cardinality limit in force.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::MetricsBridgeOptions::new().limit(), 2000);
    /// ```
    pub fn limit(&self) -> usize {
        self.cardinality_limit
    }

    /// The upper bounds of the histogram called `name`: the first matching
    /// rule's, else [`DEFAULT_HISTOGRAM_BOUNDS`].
    ///
    /// ```
    /// let f = gym_metrics_kit::bridge::MetricsBridgeOptions::new();
    /// assert_eq!(f.buckets_for("x").as_slice()[1], 5.0);
    /// ```
    pub fn buckets_for(&self, name: &str) -> Boundaries {
        self.rules
            .iter()
            .find(|(matcher, _)| matcher.matches(name))
            .map(|(_, bounds)| bounds.clone())
            .unwrap_or_else(default_boundaries)
    }
}

fn default_boundaries() -> Boundaries {
    // The constant is finite and strictly increasing (tested below).
    Boundaries::new(DEFAULT_HISTOGRAM_BOUNDS.to_vec()).unwrap_or_default()
}

/// The UCUM unit (as OpenTelemetry writes units) a `metrics::Unit` stands
/// for; `None` for [`metrics::Unit::Count`], a bare count (OpenTelemetry
/// would write an annotation such as `{request}`, which adds nothing to a
/// Prometheus name).
///
/// ```
/// use gym_metrics_kit::bridge::ucum_unit;
/// assert_eq!(ucum_unit(metrics::Unit::Seconds), Some("s"));
/// assert_eq!(ucum_unit(metrics::Unit::Bytes), Some("By"));
/// assert_eq!(ucum_unit(metrics::Unit::Count), None);
/// ```
pub fn ucum_unit(unit: metrics::Unit) -> Option<&'static str> {
    use metrics::Unit;
    Some(match unit {
        Unit::Count => return None,
        Unit::Percent => "%",
        Unit::Seconds => "s",
        Unit::Milliseconds => "ms",
        Unit::Microseconds => "us",
        Unit::Nanoseconds => "ns",
        Unit::Tebibytes => "TiBy",
        Unit::Gibibytes => "GiBy",
        Unit::Mebibytes => "MiBy",
        Unit::Kibibytes => "KiBy",
        Unit::Bytes => "By",
        Unit::TerabitsPerSecond => "Tbit/s",
        Unit::GigabitsPerSecond => "Gbit/s",
        Unit::MegabitsPerSecond => "Mbit/s",
        Unit::KilobitsPerSecond => "kbit/s",
        Unit::BitsPerSecond => "bit/s",
        Unit::CountPerSecond => "1/s",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_bounds_are_valid_and_the_first_matching_rule_wins() {
        assert!(Boundaries::new(DEFAULT_HISTOGRAM_BOUNDS.to_vec()).is_ok());
        let f = MetricsBridgeOptions::new()
            .histogram_buckets(HistogramMatcher::Full("db.query".into()), vec![1.0])
            .unwrap()
            .histogram_buckets(HistogramMatcher::Prefix("db.".into()), vec![2.0])
            .unwrap();
        assert_eq!(f.buckets_for("db.query").as_slice(), &[1.0]);
        assert_eq!(f.buckets_for("db.pool").as_slice(), &[2.0]);
        assert_eq!(
            f.buckets_for("dbx").as_slice(),
            DEFAULT_HISTOGRAM_BOUNDS.as_slice()
        );
    }
}
