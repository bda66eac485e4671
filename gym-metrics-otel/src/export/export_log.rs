//! Export failures, logged through `log` and rate-limited by the kit's
//! [`LogLimiter`]: the first failure at once, then at most one reminder a
//! minute while they go on, and one line when exports recover (after which
//! the next failure is again logged at once).

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};
use gym_metrics_kit::redact::{redact_urls, redact_value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;

/// The `log` target of every line this backend logs.
pub(crate) const LOG_TARGET: &str = "gym_metrics_otel";

/// The one cause of [`LoggedExporter`]'s rate-limited lines.
const EXPORT_FAILED: &str = "metrics export failed";

/// Wraps an exporter and logs its failures, rate-limited. Nothing it logs
/// carries the user-info or a query value of a URL (`http://user:password@`,
/// `?api_key=…`): the destination is redacted (and cut to a printable
/// length) when it is wrapped, each error as it is logged.
pub(crate) struct LoggedExporter<E> {
    inner: E,
    destination: String,
    /// Failed exports since the last success.
    failures_in_a_row: Mutex<u64>,
    /// A failure line at once, then at most one reminder a minute
    /// ([`ONCE_A_MINUTE`]); forgotten on success.
    reminders: LogLimiter,
}

impl<E: PushMetricExporter> LoggedExporter<E> {
    /// Wraps `inner`, which exports to `destination` (named in log lines).
    pub(crate) fn new(inner: E, destination: &str) -> Self {
        Self {
            inner,
            destination: redact_value("the OTLP endpoint", destination),
            failures_in_a_row: Mutex::new(0),
            reminders: LogLimiter::new(ONCE_A_MINUTE),
        }
    }

    /// Whether a failed export's values reach the collector with the next
    /// (cumulative temporality), or are lost with it.
    fn cumulative(&self) -> bool {
        self.inner.temporality() == Temporality::Cumulative
    }

    fn note(&self, result: &OTelSdkResult) {
        // Held while the limiter is asked, so a success and a failure
        // noted at once cannot interleave their count and its lines.
        let mut failures_in_a_row = self
            .failures_in_a_row
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(()) => {
                if *failures_in_a_row > 0 {
                    let sent = if self.cumulative() {
                        "cumulative totals were sent in full"
                    } else {
                        "the failed exports' increments are lost (delta temporality)"
                    };
                    log::info!(
                        target: LOG_TARGET,
                        "metrics export to {} recovered after {} failed attempt(s); {sent}",
                        self.destination,
                        *failures_in_a_row
                    );
                }
                *failures_in_a_row = 0;
                self.reminders.forget(EXPORT_FAILED);
            }
            Err(e) => {
                let e = redact_urls(&e.to_string()).into_owned();
                *failures_in_a_row += 1;
                // The count in a row says how many were held back.
                if self.reminders.admit(EXPORT_FAILED).is_some() {
                    let kept = if self.cumulative() {
                        "values keep accumulating and the next successful export carries the full totals"
                    } else {
                        "under delta temporality this export's increments are lost"
                    };
                    log::warn!(
                        target: LOG_TARGET,
                        "metrics export to {} failed ({} in a row): {e}; {kept}; check that the collector is up (further failures are logged at most once a minute)",
                        self.destination,
                        *failures_in_a_row
                    );
                }
            }
        }
    }
}

impl<E> fmt::Debug for LoggedExporter<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the inner exporter: its `Debug` may print headers.
        f.debug_struct("LoggedExporter")
            .field("destination", &self.destination)
            .finish_non_exhaustive()
    }
}

impl<E: PushMetricExporter> PushMetricExporter for LoggedExporter<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.note(&result);
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
