//! The guard `install` returns: the fleet-size capability and a shutdown
//! that exports the final values and returns within its deadline.

use std::fmt;
use std::time::Duration;

use std::sync::Arc;

use gym_metrics_api::{FleetSize, Installation};
use gym_metrics_kit::memory::MemoryProfiler;
use opentelemetry_sdk::metrics::SdkMeterProvider;

use crate::export::deadline::run_with_deadline;
use crate::export::export_log::LOG_TARGET;
use crate::{FlushError, ShutdownError};

/// Keeps the backend running; shutting it down (or dropping it) exports the
/// final values and returns within the shutdown deadline, whatever the
/// collector does.
///
/// ```
/// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
/// let (_recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::None).build()?;
/// assert!(guard.fleet_size().is_none()); // nothing installed by build()
/// guard.shutdown()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OtelGuard {
    provider: Option<SdkMeterProvider>,
    shutdown_timeout: Duration,
    installation: Option<Installation>,
    /// Gym's memory profiler, stopped with a last sample before the final export.
    memory: Option<Arc<MemoryProfiler>>,
    /// The `metrics` bridge (`OtelBuilder::with_metrics_bridge`).
    #[cfg(feature = "metrics-bridge")]
    metrics: Option<crate::MetricsBridgeRecorder>,
}

impl OtelGuard {
    pub(crate) fn new(provider: Option<SdkMeterProvider>, shutdown_timeout: Duration) -> Self {
        Self {
            provider,
            shutdown_timeout,
            installation: None,
            memory: None,
            #[cfg(feature = "metrics-bridge")]
            metrics: None,
        }
    }

    pub(crate) fn with_memory_profiler(mut self, memory: Option<Arc<MemoryProfiler>>) -> Self {
        self.memory = memory;
        self
    }

    #[cfg(feature = "metrics-bridge")]
    pub(crate) fn with_metrics_recorder(mut self, recorder: crate::MetricsBridgeRecorder) -> Self {
        self.metrics = Some(recorder);
        self
    }

    /// The `metrics` crate's recorder bridged into this pipeline, if the
    /// builder was given [`crate::OtelBuilder::with_metrics_bridge`] (and
    /// something runs: not from `install` with exporter `none`, where
    /// nothing is started and `metrics` stays without a recorder).
    /// `install` has installed it already as the process's `metrics`
    /// recorder; from `build`, install it yourself
    /// (`metrics::set_global_recorder`) or use it locally. After shutdown it
    /// still takes records, and exports nothing.
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (_recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::None).build()?;
    /// assert!(guard.metrics_recorder().is_none()); // not asked for
    /// # Ok::<(), gym_metrics_otel::BuildError>(())
    /// ```
    #[cfg(feature = "metrics-bridge")]
    pub fn metrics_recorder(&self) -> Option<crate::MetricsBridgeRecorder> {
        self.metrics.clone()
    }

    /// The SDK meter provider, while the pipeline runs (not after shutdown,
    /// nor for exporter `none` through `install`).
    pub(crate) fn provider(&self) -> Option<&SdkMeterProvider> {
        self.provider.as_ref()
    }

    pub(crate) fn with_installation(mut self, installation: Installation) -> Self {
        self.installation = Some(installation);
        self
    }

    /// The capability to set `gym.servers.active`: `Some` only when this
    /// guard installed an orchestrator recorder into the facade (with any
    /// exporter, `none` included).
    ///
    /// ```
    /// use gym_metrics_api::Role;
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let guard = OtelBuilder::new().role(Role::orchestrator()).exporter(MetricsExporter::None).install()?;
    /// assert!(guard.fleet_size().is_some()); // exporter none still declares the role
    /// # Ok::<(), gym_metrics_otel::BuildError>(())
    /// ```
    pub fn fleet_size(&self) -> Option<FleetSize> {
        self.installation.and_then(|i| i.fleet_size())
    }

    /// Collects and exports now, waiting at most the shutdown deadline.
    ///
    /// # Errors
    /// The export failed, or did not finish within the deadline (it then
    /// goes on in the background).
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (_recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::Console).build()?;
    /// guard.force_flush()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn force_flush(&self) -> Result<(), FlushError> {
        let Some(provider) = self.provider.clone() else {
            return Ok(());
        };
        let deadline = self.shutdown_timeout;
        match run_with_deadline("gym-metrics-otel-flush", deadline, move || {
            provider.force_flush()
        }) {
            None => Err(FlushError::TimedOut { deadline }),
            Some(Err(e)) => Err(FlushError::Export(redacted(&e))),
            Some(Ok(())) => Ok(()),
        }
    }

    /// Exports the final values and stops exporting, returning within the
    /// shutdown deadline (default 5 s), also against a collector that
    /// accepts connections and never answers. Recording stays cheap and
    /// harmless afterwards; nothing more is exported.
    ///
    /// # Errors
    /// The final export failed, or did not finish within the deadline.
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (_recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::None).build()?;
    /// guard.shutdown()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shutdown(mut self) -> Result<(), ShutdownError> {
        self.shutdown_now()
    }

    fn shutdown_now(&mut self) -> Result<(), ShutdownError> {
        let Some(provider) = self.provider.take() else {
            return Ok(());
        };
        let deadline = self.shutdown_timeout;
        let memory = self.memory.take();
        // The helper thread owns a clone: if the deadline passes, the SDK's
        // shutdown finishes (or times out) there, never on the caller. The
        // memory profiler's last sample, as Gym's at its stop, is taken
        // there too: it reads `/proc`, which the caller must not wait on.
        match run_with_deadline("gym-metrics-otel-shutdown", deadline, move || {
            if let Some(memory) = memory {
                memory.stop();
            }
            provider.shutdown()
        }) {
            None => Err(ShutdownError::TimedOut { deadline }),
            Some(Err(e)) => Err(ShutdownError::Export(redacted(&e))),
            Some(Ok(())) => Ok(()),
        }
    }
}

/// The SDK's error as text, the user-info and query values of any URL in
/// it redacted.
fn redacted(e: &impl fmt::Display) -> String {
    gym_metrics_kit::redact::redact_urls(&e.to_string()).into_owned()
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown_now() {
            log::warn!(target: LOG_TARGET, "{e}");
        }
    }
}

impl fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtelGuard")
            .field("running", &self.provider.is_some())
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("installation", &self.installation)
            .finish()
    }
}
