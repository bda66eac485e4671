//! The handle that renders the current exposition, for our endpoint or the
//! application's own server.

use std::sync::Arc;

#[cfg(feature = "prometheus-collector")]
use crate::exposition::collector::GymCollector;
use crate::exposition::format::TextFormat;
use crate::exposition::Exposition;
use gym_metrics_kit::recording::SharedFleetSd;

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
pub const OPENMETRICS_CONTENT_TYPE: &str = crate::exposition::format::OPENMETRICS_CONTENT_TYPE;

/// The `Content-Type` of [`PrometheusHandle::render_protobuf`]'s output.
///
/// ```
/// let (_recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
/// let response = http::Response::builder()
///     .header(http::header::CONTENT_TYPE, gym_metrics_prom::PROTOBUF_CONTENT_TYPE)
///     .body(handle.render_protobuf())?;
/// assert!(response.headers()[http::header::CONTENT_TYPE].to_str()?.ends_with("encoding=delimited"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const PROTOBUF_CONTENT_TYPE: &str = crate::exposition::protobuf::PROTOBUF_CONTENT_TYPE;

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
    #[cfg(feature = "metrics-bridge")]
    metrics: Option<crate::metrics_bridge::MetricsBridgeRecorder>,
    /// The orchestrator's published targets; `None` for any other role.
    fleet_sd: SharedFleetSd,
}

impl PrometheusHandle {
    pub(crate) fn new(exposition: Exposition, fleet_sd: SharedFleetSd) -> Self {
        Self {
            exposition: Arc::new(exposition),
            #[cfg(feature = "metrics-bridge")]
            metrics: None,
            fleet_sd,
        }
    }

    #[cfg(feature = "metrics-bridge")]
    pub(crate) fn with_metrics_recorder(
        mut self,
        recorder: crate::metrics_bridge::MetricsBridgeRecorder,
    ) -> Self {
        self.metrics = Some(recorder);
        self
    }

    /// The `metrics` crate's recorder bridged into this exposition, if the
    /// builder was given [`crate::PrometheusBuilder::with_metrics_bridge`]
    /// (installed already by `install` and `install_recorder`).
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// assert!(handle.metrics_recorder().is_none());
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    #[cfg(feature = "metrics-bridge")]
    pub fn metrics_recorder(&self) -> Option<crate::metrics_bridge::MetricsBridgeRecorder> {
        self.metrics.clone()
    }

    /// The fleet's scrape targets as Prometheus `http_sd_configs` JSON (what
    /// the endpoint serves at `GET /sd`, with `Content-Type`
    /// `application/json`): the list last
    /// published through [`gym_metrics_api::FleetSize::publish_targets`],
    /// `[]` before that. `None` unless this is the orchestrator's handle.
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_api::{FleetTarget, Role};
    /// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().role(Role::orchestrator()).build()?;
    /// assert_eq!(handle.render_fleet_sd().as_deref(), Some("[]"));
    /// // (An installed orchestrator publishes through its FleetSize capability.)
    /// recorder.publish_fleet_targets(&[FleetTarget::new("127.0.0.1:9101")?]);
    /// assert_eq!(handle.render_fleet_sd().as_deref(), Some(r#"[{"targets":["127.0.0.1:9101"],"labels":{}}]"#));
    /// let (_r, server) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// assert_eq!(server.render_fleet_sd(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render_fleet_sd(&self) -> Option<String> {
        let document = self.fleet_sd.as_ref()?.document();
        Some(String::from_utf8_lossy(&document).into_owned())
    }

    /// The `GET /sd` body, shared with the published copy.
    pub(crate) fn fleet_sd_document(&self) -> Option<bytes::Bytes> {
        self.fleet_sd.as_ref().map(|sd| sd.document())
    }

    /// The gym families as a `prometheus` crate collector, for an
    /// application that serves a `prometheus::Registry` of its own: register
    /// it there and that registry's `TextEncoder` output carries exactly what
    /// [`PrometheusHandle::render`] writes of our own families (the gym
    /// instruments' and the process's), not a later source's: the `metrics`
    /// bridge's, or Gym's memory gauges.
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

    /// The protobuf exposition: one length-delimited
    /// `io.prometheus.client.MetricFamily` per family, with the names and
    /// labels of [`PrometheusHandle::render`]'s text (see
    /// [`PROTOBUF_CONTENT_TYPE`]). Prometheus asks for it first when it runs
    /// with `--enable-feature=native-histograms`, or with
    /// `scrape_protocols: [PrometheusProto, …]`.
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// let body = handle.render_protobuf();
    /// // The first family (`gym_verify_completed_total`, always there),
    /// // preceded by its length as a varint.
    /// assert!(body.windows(26).any(|w| w == b"gym_verify_completed_total"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn render_protobuf(&self) -> Vec<u8> {
        self.exposition.render_protobuf()
    }
}
