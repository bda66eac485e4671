//! The one exporter behind the periodic reader: at each export the SDK's
//! collection (what only the SDK holds: the process, memory and `metrics`
//! bridge instruments, and an application's own) becomes an OTLP request,
//! the gym instruments encoded from the recording core join it in their
//! scope, and the request goes to the console or to a collector.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gym_metrics_kit::SCOPE_NAME;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::ScopeMetrics;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;

use crate::export::console_writer::ConsoleWriter;
use crate::export::export_log::LOG_TARGET;
use crate::export::gym_encoding::GymEncoding;

/// Where the requests go.
#[derive(Debug)]
pub(crate) enum Destination {
    /// One OTLP/JSON document a line (`opentelemetry-stdout` prints an
    /// indented text format, not JSON): every line parses as JSON and
    /// carries exactly what OTLP would.
    Console(ConsoleWriter),
    /// A collector, over a transport this build contains.
    #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
    Otlp(Box<crate::export::otlp::Sender>),
}

/// The SDK's collection and the gym instruments, as one request a export.
#[derive(Debug)]
pub(crate) struct RequestExporter {
    destination: Destination,
    gym: Arc<GymEncoding>,
    temporality: Temporality,
    shut_down: AtomicBool,
    /// A partial success was logged (once in the exporter's life).
    partial_logged: AtomicBool,
}

impl RequestExporter {
    /// An exporter of the SDK's collection with `gym` in it, to `destination`.
    pub(crate) fn new(
        destination: Destination,
        gym: Arc<GymEncoding>,
        temporality: Temporality,
    ) -> Self {
        Self {
            destination,
            gym,
            temporality,
            shut_down: AtomicBool::new(false),
            partial_logged: AtomicBool::new(false),
        }
    }

    fn send(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        if self.shut_down.load(Ordering::Acquire) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        let mut request = ExportMetricsServiceRequest::from(metrics);
        merge(&mut request, self.gym.scope_metrics());
        let partial: Option<(i64, String)> = match &self.destination {
            Destination::Console(writer) => {
                let line = serde_json::to_string(&request).map_err(|e| {
                    OTelSdkError::InternalFailure(format!("serialising metrics: {e}"))
                })?;
                writer
                    .write_line(&line)
                    .map_err(|e| OTelSdkError::InternalFailure(format!("writing metrics: {e}")))?;
                None
            }
            #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
            Destination::Otlp(sender) => sender
                .send(request)
                .map_err(OTelSdkError::InternalFailure)?,
        };
        // An empty partial success (nothing rejected, no message) is a success.
        let partial = partial.filter(|(rejected, message)| *rejected > 0 || !message.is_empty());
        if let Some((rejected, message)) = partial {
            if !self.partial_logged.swap(true, Ordering::Relaxed) {
                log::warn!(
                    target: LOG_TARGET,
                    "the collector accepted an export only in part: {rejected} data point(s) \
                     rejected ({message}); logged once"
                );
            }
        }
        Ok(())
    }
}

/// `gym` in `request`'s resource: before the SDK's metrics in the gym scope
/// (the process and memory instruments live there), else as the first scope.
fn merge(request: &mut ExportMetricsServiceRequest, gym: ScopeMetrics) {
    let Some(resource) = request.resource_metrics.first_mut() else {
        return;
    };
    let ours = |s: &ScopeMetrics| {
        s.scope
            .as_ref()
            .is_some_and(|scope| scope.name == SCOPE_NAME)
    };
    match resource.scope_metrics.iter_mut().find(|s| ours(s)) {
        Some(scope) => {
            let sdk = std::mem::replace(&mut scope.metrics, gym.metrics);
            scope.metrics.extend(sdk);
        }
        None => resource.scope_metrics.insert(0, gym),
    }
}

impl PushMetricExporter for RequestExporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        self.send(metrics)
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
