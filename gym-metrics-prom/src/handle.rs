//! The handle that renders the current exposition, for our endpoint or the
//! application's own server.

use std::sync::Arc;

#[cfg(feature = "prometheus-collector")]
use crate::collector::GymCollector;
use crate::exposition::Exposition;
use crate::text_format::TextFormat;

/// The `Content-Type` of [`PrometheusHandle::render`]'s output.
///
/// ```
/// use gym_metrics_api::backend::Recorder;
/// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// recorder.record_verify_ms(40.0, true);
/// let response = http::Response::builder()
///     .header(http::header::CONTENT_TYPE, gym_metrics_prom::TEXT_CONTENT_TYPE)
///     .body(handle.render())?;
/// assert_eq!(response.headers()[http::header::CONTENT_TYPE], "text/plain; version=0.0.4; charset=utf-8");
/// assert!(response.body().contains("# TYPE gym_verify_completed_total counter"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The `Content-Type` of [`PrometheusHandle::render_openmetrics`]'s output.
///
/// ```
/// let (_recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// let response = http::Response::builder()
///     .header(http::header::CONTENT_TYPE, gym_metrics_prom::OPENMETRICS_CONTENT_TYPE)
///     .body(handle.render_openmetrics())?;
/// assert!(response.headers()[http::header::CONTENT_TYPE].to_str()?.starts_with("application/openmetrics-text"));
/// assert!(response.body().ends_with("# EOF\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const OPENMETRICS_CONTENT_TYPE: &str = crate::text_format::OPENMETRICS_CONTENT_TYPE;

/// Renders the exposition on demand; cheap to clone and to share.
///
/// ```
/// let (_recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// // In an axum/hyper/actix handler of your own:
/// let body = handle.render();
/// assert!(body.contains("# TYPE target_info gauge"));
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct PrometheusHandle {
    // Shared: the endpoint clones the handle for every connection.
    exposition: Arc<Exposition>,
}

impl PrometheusHandle {
    pub(crate) fn new(exposition: Exposition) -> Self {
        Self {
            exposition: Arc::new(exposition),
        }
    }

    /// The gym families as a `prometheus` crate collector, for an
    /// application that serves a `prometheus::Registry` of its own: register
    /// it there and that registry's `TextEncoder` output carries exactly what
    /// [`PrometheusHandle::render`] writes.
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// let registry = prometheus::Registry::new();
    /// registry.register(Box::new(handle.collector()))?;
    /// assert!(registry.gather().iter().any(|f| f.name() == "target_info"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "prometheus-collector")]
    pub fn collector(&self) -> GymCollector {
        GymCollector::new(Arc::clone(self.exposition.families()))
    }

    /// The Prometheus text format 0.0.4 exposition (see [`TEXT_CONTENT_TYPE`]).
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// assert!(handle.render().contains("# HELP target_info Target metadata\n"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn render(&self) -> String {
        self.exposition.render(TextFormat::Prometheus)
    }

    /// The OpenMetrics 1.0 text exposition, ending with `# EOF` (see
    /// [`OPENMETRICS_CONTENT_TYPE`]).
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// assert!(handle.render_openmetrics().ends_with("# EOF\n"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn render_openmetrics(&self) -> String {
        self.exposition.render(TextFormat::OpenMetrics)
    }
}
