//! The handle that renders the current exposition, for our endpoint or the
//! application's own server.

use prometheus::{Registry, TextEncoder};

use crate::openmetrics::encode_openmetrics;

/// The `Content-Type` of [`PrometheusHandle::render`]'s output.
///
/// ```
/// assert!(gym_metrics_prom::TEXT_CONTENT_TYPE.starts_with("text/plain; version=0.0.4"));
/// ```
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The `Content-Type` of [`PrometheusHandle::render_openmetrics`]'s output.
///
/// ```
/// assert!(gym_metrics_prom::OPENMETRICS_CONTENT_TYPE.starts_with("application/openmetrics-text"));
/// ```
pub const OPENMETRICS_CONTENT_TYPE: &str = crate::openmetrics::OPENMETRICS_CONTENT_TYPE;

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
    registry: Registry,
}

impl PrometheusHandle {
    pub(crate) fn new(registry: Registry) -> Self {
        Self { registry }
    }

    /// The Prometheus text format 0.0.4 exposition (see [`TEXT_CONTENT_TYPE`]).
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// assert!(handle.render().contains("# HELP target_info Target metadata\n"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn render(&self) -> String {
        let families = self.registry.gather();
        let mut out = String::new();
        if let Err(e) = TextEncoder::new().encode_utf8(&families, &mut out) {
            // Only malformed families fail; ours are built well-formed.
            log::error!(target: "gym_metrics", "rendering the Prometheus exposition failed: {e}");
        }
        out
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
        encode_openmetrics(&self.registry.gather())
    }
}
