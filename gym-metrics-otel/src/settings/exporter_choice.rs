//! Which exporter the backend uses: `OTEL_METRICS_EXPORTER`.

use gym_metrics_kit::env::parse_choice;

use crate::ConfigError;

/// The metrics exporter, as chosen by `OTEL_METRICS_EXPORTER`.
///
/// ```
/// use gym_metrics_otel::MetricsExporter;
/// assert_eq!(MetricsExporter::default(), MetricsExporter::Otlp);
/// assert_eq!(MetricsExporter::parse("OTEL_METRICS_EXPORTER", "console").unwrap(), MetricsExporter::Console);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MetricsExporter {
    /// OTLP to a collector (the default), over http/protobuf or gRPC.
    #[default]
    Otlp,
    /// One OTLP/JSON document per export, one line each, on standard output.
    Console,
    /// Nothing exported: `install` declares the role with a recorder that
    /// records nothing.
    None,
}

impl MetricsExporter {
    /// Parses `otlp`, `console` or `none` (case-insensitive); `variable`
    /// names the source in the error.
    ///
    /// # Errors
    /// Any other value, naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_otel::MetricsExporter;
    /// let e = MetricsExporter::parse("OTEL_METRICS_EXPORTER", "prometheus").unwrap_err();
    /// assert!(e.to_string().contains("prometheus"));
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        let words = [
            ("otlp", MetricsExporter::Otlp),
            ("console", MetricsExporter::Console),
            ("none", MetricsExporter::None),
        ];
        let note = "a single exporter; for Prometheus use the gym-metrics-prom backend";
        parse_choice(variable, value, &words, note)
    }
}
