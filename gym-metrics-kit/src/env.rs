//! The environment readers: every variable a backend reads, read once at
//! start-up, a bad value an error naming the variable and the value.
//!
//! | reader | what it reads |
//! |---|---|
//! | [`EnvVars`] | the variables themselves, once, UTF-8; which of a group counts |
//! | [`OtelEnv`] | the OpenTelemetry variables both backends read (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SEMCONV_STABILITY_OPT_IN`) |
//! | [`GymEnv`] | what a NeMo Gym orchestrator hands its servers (`NEMO_GYM_OTEL_*`, falling back to `NEMO_LENS_*`) |
//! | [`TlsEnv`] | the OTLP exporter's TLS files and `insecure` flag |
//! | [`parse_bool`], [`parse_choice`], [`parse_number`], [`parse_millis`], [`parse_millis_at_least`], [`parse_key_values`] | the one parser of each kind of value |

mod gym;
mod otel;
mod parse;
mod tls;
mod vars;

pub use gym::{GymEnv, GymExporter, RUN_ID_ATTRIBUTE, SERVICE_GROUP_ATTRIBUTE};
pub use otel::{ExemplarFilter, OtelEnv};
pub use parse::{
    parse_bool, parse_choice, parse_key_values, parse_millis, parse_millis_at_least, parse_number,
    Booleans,
};
pub use tls::{PemFile, TlsEnv};
pub use vars::EnvVars;
