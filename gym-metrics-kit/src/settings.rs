//! What every backend's builder sets alike: the role, the histogram
//! boundaries, the resource (the base of `service.name` and the extra
//! attributes), NeMo Gym's settings, and which families beyond the gym
//! instruments are on. Each builder embeds one [`Settings`] and names its
//! setters after its fields, so the two backends are configured in the same
//! words; what only one backend has (a listener, an exporter) stays in its
//! own builder.

use gym_metrics_api::backend::Boundaries;
use gym_metrics_api::Role;

use crate::env::{ExemplarFilter, GymEnv, OtelEnv};

/// The settings both backends' builders carry.
///
/// ```
/// use gym_metrics_kit::env::OtelEnv;
/// use gym_metrics_kit::settings::Settings;
/// let mut settings = Settings::default();
/// let mut env = OtelEnv::default();
/// env.service_name = Some("lab".into());
/// env.http_dup = true;
/// settings.apply_env(env);
/// assert_eq!(settings.service_name.as_deref(), Some("lab"));
/// assert!(settings.http_dup && !settings.process_metrics);
/// assert_eq!(settings.role, gym_metrics_api::Role::default_server());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// The role this process declares (`role`).
    pub role: Role,
    /// The gym duration histograms' bucket bounds (`histogram_boundaries`).
    pub boundaries: Boundaries,
    /// The base of `service.name`, `<base>/<role name>` (`service_name`,
    /// `OTEL_SERVICE_NAME`).
    pub service_name: Option<String>,
    /// Extra resource attributes, in the order given (`resource_attribute`,
    /// `OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Vec<(String, String)>,
    /// NeMo Gym's settings (`gym_env`).
    pub gym: GymEnv,
    /// This process's own resource use is exported too (`with_process_metrics`).
    pub process_metrics: bool,
    /// The old `http.server.duration` is exported beside the stable metric
    /// (`with_old_http_server_duration`, `OTEL_SEMCONV_STABILITY_OPT_IN=http/dup`).
    pub http_dup: bool,
    /// Which timed records take their span as an exemplar
    /// (`OTEL_METRICS_EXEMPLAR_FILTER`).
    pub exemplar_filter: ExemplarFilter,
    /// The `metrics` crate is bridged, with these options (`with_metrics_bridge`).
    #[cfg(feature = "metrics-bridge")]
    pub metrics_bridge: Option<crate::bridge::MetricsBridgeOptions>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            role: Role::default_server(),
            boundaries: Boundaries::default_duration_ms(),
            service_name: None,
            resource_attributes: Vec::new(),
            gym: GymEnv::default(),
            process_metrics: false,
            http_dup: false,
            exemplar_filter: ExemplarFilter::default(),
            #[cfg(feature = "metrics-bridge")]
            metrics_bridge: None,
        }
    }
}

impl Settings {
    /// Takes what the OpenTelemetry variables say: the service name (where
    /// set), the resource attributes (after any given before) and `http/dup`
    /// (which only turns the old metric on).
    ///
    /// ```
    /// let mut settings = gym_metrics_kit::settings::Settings::default();
    /// settings.resource_attributes.push(("a".into(), "1".into()));
    /// let mut env = gym_metrics_kit::env::OtelEnv::default();
    /// env.resource_attributes.push(("b".into(), "2".into()));
    /// settings.apply_env(env);
    /// assert_eq!(settings.resource_attributes.len(), 2);
    /// assert_eq!(settings.service_name, None);
    /// ```
    pub fn apply_env(&mut self, env: OtelEnv) {
        if env.service_name.is_some() {
            self.service_name = env.service_name;
        }
        self.resource_attributes.extend(env.resource_attributes);
        self.http_dup |= env.http_dup;
        self.exemplar_filter = env.exemplar_filter;
    }
}
