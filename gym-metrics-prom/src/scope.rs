//! The instrumentation scope every gym series carries, as OpenTelemetry's
//! exporter labels it (`otel_scope_name`, `otel_scope_version`): the API's
//! constants, which the OpenTelemetry backend's meter uses too.

pub use gym_metrics_kit::SCOPE_NAME;
pub use gym_metrics_kit::SCOPE_VERSION;
