//! The native extension point of the OpenTelemetry backend: the guard hands
//! out its SDK meter provider, so that instruments an application (or a
//! library) creates with the OpenTelemetry API share our resource, exporter,
//! export interval, temporality and the guard's bounded shutdown flush.

use opentelemetry_sdk::metrics::SdkMeterProvider;

use crate::OtelGuard;

impl OtelGuard {
    /// The SDK meter provider our instruments live on; `None` after
    /// shutdown, and from [`crate::OtelBuilder::install`] with exporter
    /// `none` (nothing runs then). Create your own meters on it (use a scope
    /// name of your own, not [`crate::SCOPE_NAME`]); the guard's
    /// [`OtelGuard::shutdown`] exports their last values too.
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// use opentelemetry::metrics::MeterProvider;
    /// let (_recorder, guard) = OtelBuilder::new()
    ///     .exporter(MetricsExporter::Console)
    ///     .console_writer(std::io::sink())
    ///     .build()?;
    /// let meter = guard.meter_provider().expect("running").meter("my-app");
    /// meter.u64_counter("sandbox.starts").build().add(1, &[]);
    /// guard.shutdown()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn meter_provider(&self) -> Option<SdkMeterProvider> {
        self.provider().cloned()
    }

    /// Makes our meter provider OpenTelemetry's global one
    /// (`opentelemetry::global::meter`), for libraries that take their
    /// meter from there. Returns `false`, changing nothing, when there is no
    /// provider (see [`OtelGuard::meter_provider`]). The global provider
    /// keeps a clone: shut the pipeline down through the guard, as always.
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (_recorder, guard) = OtelBuilder::new()
    ///     .exporter(MetricsExporter::Console)
    ///     .console_writer(std::io::sink())
    ///     .build()?;
    /// assert!(guard.set_global_meter_provider());
    /// opentelemetry::global::meter("my-lib").f64_gauge("pool.size").build().record(3.0, &[]);
    /// guard.shutdown()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_global_meter_provider(&self) -> bool {
        match self.meter_provider() {
            Some(provider) => {
                opentelemetry::global::set_meter_provider(provider);
                true
            }
            None => false,
        }
    }
}
