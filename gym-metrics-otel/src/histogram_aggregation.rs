//! Explicit buckets or base-2 exponential histograms:
//! `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`.

use gym_metrics_kit::env::parse_choice;
use opentelemetry_sdk::metrics::Aggregation;

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
    /// Base-2 exponential buckets (160 buckets, scale up to 20), min and max recorded.
    Base2Exponential,
}

/// Buckets of an exponential histogram (the OpenTelemetry default).
const EXPONENTIAL_MAX_SIZE: u32 = 160;
/// Highest resolution of an exponential histogram (the OpenTelemetry default).
const EXPONENTIAL_MAX_SCALE: i8 = 20;

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

    /// The SDK aggregation that overrides the instrument's explicit
    /// boundaries, or `None` to keep them.
    pub(crate) fn sdk_override(self) -> Option<Aggregation> {
        match self {
            HistogramAggregation::ExplicitBuckets => None,
            HistogramAggregation::Base2Exponential => {
                Some(Aggregation::Base2ExponentialHistogram {
                    max_size: EXPONENTIAL_MAX_SIZE,
                    max_scale: EXPONENTIAL_MAX_SCALE,
                    record_min_max: true,
                })
            }
        }
    }
}
