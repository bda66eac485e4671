//! Cumulative or delta: `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`.

use gym_metrics_kit::env::parse_choice;
use opentelemetry_sdk::metrics::Temporality;

use crate::ConfigError;

/// The aggregation temporality the exporter asks for.
///
/// Cumulative (the default) is what makes a collector outage lossless: the
/// first export after it comes back carries the full totals.
///
/// ```
/// use gym_metrics_otel::TemporalityPreference;
/// assert_eq!(TemporalityPreference::default(), TemporalityPreference::Cumulative);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TemporalityPreference {
    /// Totals since start (the default).
    #[default]
    Cumulative,
    /// Changes since the previous export: an export lost to an outage is lost.
    Delta,
    /// Delta for synchronous counters and histograms, cumulative otherwise.
    LowMemory,
}

impl TemporalityPreference {
    /// Parses `cumulative`, `delta` or `lowmemory` (case-insensitive).
    ///
    /// # Errors
    /// Any other value, naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_otel::TemporalityPreference;
    /// let v = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
    /// assert_eq!(TemporalityPreference::parse(v, "Delta").unwrap(), TemporalityPreference::Delta);
    /// assert!(TemporalityPreference::parse(v, "weekly").is_err());
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        let words = [
            ("cumulative", TemporalityPreference::Cumulative),
            ("delta", TemporalityPreference::Delta),
            ("lowmemory", TemporalityPreference::LowMemory),
        ];
        parse_choice(variable, value, &words, "")
    }

    /// The SDK's temporality for this preference.
    pub(crate) fn sdk(self) -> Temporality {
        match self {
            TemporalityPreference::Cumulative => Temporality::Cumulative,
            TemporalityPreference::Delta => Temporality::Delta,
            TemporalityPreference::LowMemory => Temporality::LowMemory,
        }
    }
}
