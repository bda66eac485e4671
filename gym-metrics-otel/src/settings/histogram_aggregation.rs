//! Explicit buckets or base-2 exponential histograms:
//! `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`.

use gym_metrics_kit::env::parse_choice;

use crate::ConfigError;

/// How the two duration histograms aggregate.
///
/// ```
/// use gym_metrics_otel::HistogramAggregation;
/// assert_eq!(HistogramAggregation::default(), HistogramAggregation::ExplicitBuckets);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HistogramAggregation {
    /// The catalogue's (or the builder's) explicit bucket boundaries (the default).
    #[default]
    ExplicitBuckets,
    /// Base-2 exponential buckets, straight from the recording core's native
    /// cells: scale 3 (eight buckets per doubling, lowered to fit), at most
    /// 160 buckets wide, as the specification's default `max_size`.
    Base2Exponential,
}

impl HistogramAggregation {
    /// Parses `explicit_bucket_histogram` or `base2_exponential_bucket_histogram`.
    ///
    /// # Errors
    /// Any other value, naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_otel::HistogramAggregation;
    /// let v = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION";
    /// let a = HistogramAggregation::parse(v, "base2_exponential_bucket_histogram").unwrap();
    /// assert_eq!(a, HistogramAggregation::Base2Exponential);
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        let words = [
            (
                "explicit_bucket_histogram",
                HistogramAggregation::ExplicitBuckets,
            ),
            (
                "base2_exponential_bucket_histogram",
                HistogramAggregation::Base2Exponential,
            ),
        ];
        parse_choice(variable, value, &words, "")
    }
}
