//! The export pipeline: the SDK's periodic reader drives one exporter,
//! which merges the gym instruments, encoded from the recording core, into
//! the SDK's collection and sends the request.
//!
//! | file | what it holds |
//! |---|---|
//! | `pipeline.rs` | the meter provider and its periodic reader, from the builder's settings |
//! | `request_exporter.rs` | the one exporter: the SDK's collection and the gym scope as one request, to the console or a collector |
//! | `gym_encoding.rs` | the gym instruments as OTLP, from the recording core |
//! | `export_log.rs` | export failures, logged rate-limited |
//! | `console_writer.rs` | where the console exporter writes |
//! | `deadline.rs` | a blocking job with a deadline the caller can count on |
//! | `otlp/` | the transports: http/protobuf, http/json, gRPC, and their retry policy |
//! | `tls.rs` | the transports' client TLS |

pub(crate) mod console_writer;
pub(crate) mod deadline;
pub(crate) mod export_log;
pub(crate) mod gym_encoding;
// The OTLP transports, one Cargo feature each; none: console and `none` only.
#[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
pub(crate) mod otlp;
pub(crate) mod pipeline;
pub(crate) mod request_exporter;
#[cfg(all(
    feature = "tls",
    any(feature = "grpc", feature = "http-proto", feature = "http-json")
))]
pub(crate) mod tls;
