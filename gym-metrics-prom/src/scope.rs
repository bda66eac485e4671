//! The instrumentation scope every gym series carries, as OpenTelemetry's
//! exporter labels it (`otel_scope_name`, `otel_scope_version`).

/// The scope name: `otel_scope_name` on every gym series.
///
/// ```
/// assert_eq!(gym_metrics_prom::SCOPE_NAME, "gym-metrics");
/// ```
pub const SCOPE_NAME: &str = "gym-metrics";

/// The scope version: `otel_scope_version` on every gym series (the
/// workspace version, shared by every gym-metrics crate).
///
/// ```
/// assert!(!gym_metrics_prom::SCOPE_VERSION.is_empty());
/// ```
pub const SCOPE_VERSION: &str = env!("CARGO_PKG_VERSION");
