//! The console exporter: one OTLP/JSON document per export, on one line.
//!
//! `opentelemetry-stdout` 0.33 prints an indented, human-oriented text
//! format, not JSON; this exporter prints the OTLP request itself
//! (`ExportMetricsServiceRequest`, serialised with the protocol's own serde
//! mapping), so every line parses as JSON and carries exactly what OTLP would.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;

use crate::console_writer::ConsoleWriter;

/// Writes each export as one JSON line to a [`ConsoleWriter`].
#[derive(Debug)]
pub(crate) struct ConsoleExporter {
    writer: ConsoleWriter,
    temporality: Temporality,
    shut_down: AtomicBool,
}

impl ConsoleExporter {
    /// An exporter writing to `writer` with `temporality`.
    pub(crate) fn new(writer: ConsoleWriter, temporality: Temporality) -> Self {
        Self {
            writer,
            temporality,
            shut_down: AtomicBool::new(false),
        }
    }

    fn write(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        if self.shut_down.load(Ordering::Acquire) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        let request = ExportMetricsServiceRequest::from(metrics);
        let line = serde_json::to_string(&request)
            .map_err(|e| OTelSdkError::InternalFailure(format!("serialising metrics: {e}")))?;
        self.writer
            .write_line(&line)
            .map_err(|e| OTelSdkError::InternalFailure(format!("writing metrics: {e}")))
    }
}

impl PushMetricExporter for ConsoleExporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        self.write(metrics)
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.shut_down.store(true, Ordering::Release);
        Ok(())
    }

    fn temporality(&self) -> Temporality {
        self.temporality
    }
}
