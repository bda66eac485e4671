//! The builder: configuration, then one of three exits — [`PrometheusBuilder::install`]
//! (facade + our own listener), [`PrometheusBuilder::install_recorder`]
//! (facade only) or [`PrometheusBuilder::build`] (neither).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gym_metrics_api::backend::{Boundaries, BoundariesError};
use gym_metrics_api::{Installation, Role};
use gym_metrics_kit::env::{EnvVars, GymEnv};
use gym_metrics_kit::install::{Install, ThenInstall};
use gym_metrics_kit::settings::Settings;

use crate::endpoint::{Endpoint, Protection};
use crate::endpoint_env::EndpointEnv;
use crate::error::{BuildError, ConfigError};
use crate::exposition::gym::GymFamilies;
use crate::exposition::memory::MemoryFamilies;
use crate::exposition::Exposition;
use crate::guard::PrometheusGuard;
use crate::handle::PrometheusHandle;
use crate::listen_address::ListenAddress;
use crate::resource::Resource;
use crate::PrometheusRecorder;
use gym_metrics_kit::recording::GymMetrics;
use gym_metrics_kit::recording::{NativeConfig, NativeHistogramError};

/// Configures the Prometheus backend.
///
/// ```no_run
/// use gym_metrics_api::Role;
/// use gym_metrics_prom::PrometheusBuilder;
/// let guard = PrometheusBuilder::from_env()?
///     .role(Role::orchestrator())
///     .with_http_listener(([127, 0, 0, 1], 0))
///     .install()?;
/// println!("scrape http://{}/metrics", guard.local_addr());
/// guard.fleet_size().expect("orchestrator").set(4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct PrometheusBuilder {
    listen: ListenAddress,
    /// What both backends' builders set alike.
    settings: Settings,
    final_scrape_wait: Option<Duration>,
    web_config_file: Option<std::path::PathBuf>,
    native: NativeConfig,
    #[cfg(feature = "prometheus-registry")]
    registry: Option<prometheus::Registry>,
}

impl Default for PrometheusBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl PrometheusBuilder {
    /// Defaults: listen on `localhost:9464`, role `server("server", "server")`,
    /// the catalogue's boundaries. Reads no environment variable.
    ///
    /// ```
    /// let (recorder, _handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// use gym_metrics_api::backend::Recorder;
    /// assert_eq!(recorder.role().name(), "server");
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn new() -> Self {
        Self {
            listen: ListenAddress::default(),
            settings: Settings::default(),
            final_scrape_wait: None,
            web_config_file: None,
            native: NativeConfig::default(),
            #[cfg(feature = "prometheus-registry")]
            registry: None,
        }
    }

    /// [`PrometheusBuilder::new`], then `OTEL_EXPORTER_PROMETHEUS_HOST`,
    /// `OTEL_EXPORTER_PROMETHEUS_PORT`, `OTEL_SERVICE_NAME` and
    /// `OTEL_RESOURCE_ATTRIBUTES`, `GYM_METRICS_WEB_CONFIG_FILE` and
    /// `GYM_METRICS_NATIVE_HISTOGRAM_SCHEMA` and `…_BUCKET_LIMIT` where set
    /// (an empty variable counts as unset), `OTEL_SEMCONV_STABILITY_OPT_IN`
    /// (`http/dup`: [`PrometheusBuilder::with_old_http_server_duration`]),
    /// and NeMo Gym's settings (see [`gym_metrics_kit::env::GymEnv`]):
    /// `NEMO_GYM_OTEL_ENABLED` / `…_METRICS_ENABLED` false installs without
    /// listening, `…_RUN_ID` (else `SLURM_JOB_ID`) is `nemo.run.id`,
    /// `…_SERVICE_NAME_PER_SERVER` and `…_SPAN_GROUPS` as in Gym, each
    /// falling back to its `NEMO_LENS_*` twin. `…_EXPORTER` is validated but
    /// has no meaning here: this backend is scraped.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the variable and its value when one cannot be
    /// parsed or is not UTF-8.
    ///
    /// ```
    /// // OTEL_SERVICE_NAME=lab in the process environment
    /// # // SAFETY: the example has not started a thread yet.
    /// # unsafe { std::env::set_var("OTEL_SERVICE_NAME", "lab") };
    /// let (_recorder, handle) = gym_metrics_prom::PrometheusBuilder::from_env()?.build()?;
    /// assert!(handle.render().contains("service_name=\"lab/server\""));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_vars(&EnvVars::from_process(&variable_names())?)
    }

    /// [`PrometheusBuilder::from_env`] over the variables `lookup` returns
    /// instead of the process environment (an empty value counts as unset).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the variable and its value when one cannot be
    /// parsed.
    ///
    /// ```
    /// let env = |name: &str| (name == "OTEL_EXPORTER_PROMETHEUS_PORT").then(|| "http".to_string());
    /// let e = gym_metrics_prom::PrometheusBuilder::from_env_lookup(env).unwrap_err();
    /// assert!(e.to_string().contains("OTEL_EXPORTER_PROMETHEUS_PORT=\"http\""));
    /// ```
    pub fn from_env_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        Self::from_vars(&EnvVars::from_lookup(&variable_names(), lookup))
    }

    fn from_vars(vars: &EnvVars) -> Result<Self, ConfigError> {
        let env = EndpointEnv::read(vars)?;
        let gym = GymEnv::read(|name| vars.get(name))?;
        Ok(Self::new().apply_env(env).gym_env(gym))
    }

    /// NeMo Gym's settings, as [`GymEnv::read`] gives them (what
    /// [`PrometheusBuilder::from_env`] reads from the process environment).
    ///
    /// ```
    /// use gym_metrics_kit::env::{EnvVars, GymEnv};
    /// let gym = GymEnv::read(|n| (n == "NEMO_GYM_OTEL_RUN_ID").then(|| "run-7".to_string()))?;
    /// let (_r, h) = gym_metrics_prom::PrometheusBuilder::new().gym_env(gym).build()?;
    /// assert!(h.render().contains("nemo_run_id=\"run-7\""));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gym_env(mut self, gym: GymEnv) -> Self {
        self.settings.gym = gym;
        self
    }

    fn apply_env(mut self, env: EndpointEnv) -> Self {
        if let ListenAddress::HostPort { host, port } = &mut self.listen {
            if let Some(h) = env.host {
                *host = h;
            }
            if let Some(p) = env.port {
                *port = p;
            }
        }
        self.settings.apply_env(env.resource);
        if env.web_config_file.is_some() {
            self.web_config_file = env.web_config_file;
        }
        self.native = env.native;
        self
    }

    /// The role this process declares (orchestrator or server).
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// let b = gym_metrics_prom::PrometheusBuilder::new().role(gym_metrics_api::Role::orchestrator());
    /// let (recorder, _handle) = b.build()?;
    /// assert!(recorder.role().is_orchestrator());
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.settings.role = role;
        self
    }

    /// Listen on `addr` instead of the host and port from the environment;
    /// port 0 picks a free port (see [`PrometheusGuard::local_addr`]).
    ///
    /// ```
    /// let b = gym_metrics_prom::PrometheusBuilder::new().with_http_listener(([127, 0, 0, 1], 0));
    /// assert!(format!("{b:?}").contains("listen: Socket(127.0.0.1:0)"));
    /// ```
    pub fn with_http_listener(mut self, addr: impl Into<SocketAddr>) -> Self {
        self.listen = ListenAddress::Socket(addr.into());
        self
    }

    /// Overrides the bucket upper bounds (milliseconds) of both duration histograms.
    ///
    /// # Errors
    /// [`BoundariesError`] for a list [`Boundaries::new`] refuses (empty, a bound not finite,
    /// negative, under a nanosecond or past 584 years, or not increasing in whole nanoseconds).
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// let b = gym_metrics_prom::PrometheusBuilder::new().histogram_boundaries(vec![10.0, 100.0])?;
    /// assert!(gym_metrics_prom::PrometheusBuilder::new().histogram_boundaries(vec![5.0, 1.0]).is_err());
    /// let (recorder, handle) = b.build()?;
    /// recorder.record_rollout_duration_ms(50.0);
    /// let le_100 = handle.render().lines().find(|l| {
    ///     l.starts_with("gym_rollout_duration_ms_milliseconds_bucket") && l.contains("le=\"100\"")
    /// }).map(str::to_owned);
    /// assert!(le_100.expect("a bucket at 100 ms").ends_with(" 1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn histogram_boundaries(mut self, bounds: Vec<f64>) -> Result<Self, BoundariesError> {
        self.settings.boundaries = Boundaries::new(bounds)?;
        Ok(self)
    }

    /// The native histograms' schema: bucket `k` holds the values in
    /// `(2^((k-1)/2^schema), 2^(k/2^schema)]`. The default, 3, has eight
    /// buckets per doubling, each about 9 % wide, from about a microsecond
    /// to about twelve days in 320 counts per thread. Each step up halves
    /// the width and doubles the counts; a negative schema is kept at 0
    /// and merged at scrape. `GYM_METRICS_NATIVE_HISTOGRAM_SCHEMA` sets it
    /// too. Every histogram family carries its native histogram beside its
    /// classic buckets in the protobuf format, which Prometheus asks for
    /// when it runs with `--enable-feature=native-histograms`.
    ///
    /// # Errors
    /// [`NativeHistogramError::Schema`] outside -4 to 8.
    ///
    /// ```
    /// let b = gym_metrics_prom::PrometheusBuilder::new().native_histogram_schema(5)?;
    /// assert!(gym_metrics_prom::PrometheusBuilder::new().native_histogram_schema(-5).is_err());
    /// # Ok::<(), gym_metrics_prom::NativeHistogramError>(())
    /// ```
    pub fn native_histogram_schema(mut self, schema: i8) -> Result<Self, NativeHistogramError> {
        self.native = self.native.with_schema(schema)?;
        Ok(self)
    }

    /// The most native buckets one series shows (default 160): a scrape
    /// lowers the schema, merging neighbours, until the buckets in use fit;
    /// at the lowest schema (-4) it widens the zero bucket over the lowest
    /// ones, as client_golang does, so the limit holds for every setting.
    /// `GYM_METRICS_NATIVE_HISTOGRAM_BUCKET_LIMIT` sets it too.
    ///
    /// # Errors
    /// [`NativeHistogramError::BucketLimit`] for 0.
    ///
    /// ```
    /// let b = gym_metrics_prom::PrometheusBuilder::new().native_histogram_bucket_limit(40)?;
    /// assert!(gym_metrics_prom::PrometheusBuilder::new().native_histogram_bucket_limit(0).is_err());
    /// # Ok::<(), gym_metrics_prom::NativeHistogramError>(())
    /// ```
    pub fn native_histogram_bucket_limit(
        mut self,
        limit: usize,
    ) -> Result<Self, NativeHistogramError> {
        self.native = self.native.with_bucket_limit(limit)?;
        Ok(self)
    }

    /// The base of `service.name` (`<base>/<role name>`), as `OTEL_SERVICE_NAME` sets it.
    ///
    /// ```
    /// let (_r, h) = gym_metrics_prom::PrometheusBuilder::new().service_name("lab").build()?;
    /// assert!(h.render().contains("service_name=\"lab/server\""));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn service_name(mut self, base: impl Into<String>) -> Self {
        self.settings.service_name = Some(base.into());
        self
    }

    /// Adds a resource attribute to `target_info` (the role's attributes and
    /// `service.name` cannot be overridden this way).
    ///
    /// ```
    /// let (_r, h) = gym_metrics_prom::PrometheusBuilder::new()
    ///     .resource_attribute("deployment.environment", "lab")
    ///     .build()?;
    /// assert!(h.render().contains("deployment_environment=\"lab\""));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings
            .resource_attributes
            .push((key.into(), value.into()));
        self
    }

    /// Which timed records take their span as an exemplar (feature
    /// `exemplars`; `OTEL_METRICS_EXEMPLAR_FILTER`): `TraceBased` (the
    /// default) keeps a timer's started inside a sampled span, newest per
    /// bucket.
    ///
    /// ```
    /// use gym_metrics_prom::{ExemplarFilter, PrometheusBuilder};
    /// let b = PrometheusBuilder::new().exemplar_filter(ExemplarFilter::AlwaysOff);
    /// assert!(format!("{b:?}").contains("AlwaysOff"));
    /// ```
    pub fn exemplar_filter(mut self, filter: crate::ExemplarFilter) -> Self {
        self.settings.exemplar_filter = filter;
        self
    }

    /// At shutdown ([`PrometheusGuard::shutdown`] or dropping the guard),
    /// keep serving until one more scrape of `/metrics`, rendered after
    /// shutdown was asked for, has been written out in full, or `max_wait`
    /// passes, whichever comes first: a process that ends then leaves its
    /// last recordings in Prometheus. A scrape interval plus a little is a
    /// good `max_wait`. Off by default: shutdown stops at once.
    ///
    /// ```
    /// use std::time::Duration;
    /// let guard = gym_metrics_prom::PrometheusBuilder::new()
    ///     .with_http_listener(([127, 0, 0, 1], 0))
    ///     .final_scrape_wait(Duration::from_millis(20))
    ///     .install()?;
    /// gym_metrics_api::record_verify_ms(40.0, true);
    /// let outcome = guard.shutdown(); // nobody scrapes here: waits 20 ms
    /// assert_eq!(
    ///     outcome,
    ///     Err(gym_metrics_prom::ShutdownError::FinalScrapeMissed { waited: Duration::from_millis(20) })
    /// );
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn final_scrape_wait(mut self, max_wait: Duration) -> Self {
        self.final_scrape_wait = Some(max_wait);
        self
    }

    /// Also bridge the `metrics` crate (feature `metrics-bridge`):
    /// `metrics::counter!`, `gauge!` and `histogram!` land in the same
    /// exposition, after the gym families, with `options`' bucket rules and
    /// cardinality limit. `install` and `install_recorder` install it as the
    /// process's `metrics` recorder; `build` hands it out
    /// ([`PrometheusHandle::metrics_recorder`]). A setting rather than
    /// something the feature does by itself: Cargo unifies features, and a
    /// dependency turning the feature on must not take the process's one
    /// `metrics` recorder slot from an application that fills it otherwise.
    ///
    /// ```
    /// use gym_metrics_prom::{HistogramMatcher, MetricsBridgeOptions};
    /// let options = MetricsBridgeOptions::new()
    ///     .histogram_buckets(HistogramMatcher::Prefix("sandbox.".into()), vec![0.1, 1.0, 10.0])?;
    /// let guard = gym_metrics_prom::PrometheusBuilder::new()
    ///     .with_http_listener(([127, 0, 0, 1], 0))
    ///     .with_metrics_bridge(options)
    ///     .install()?;
    /// metrics::histogram!("sandbox.start", "provider" => "docker").record(0.8);
    /// assert!(guard.handle().render().contains("sandbox_start_bucket{provider=\"docker\",otel_scope_name=\"metrics\",le=\"1\"} 1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "metrics-bridge")]
    pub fn with_metrics_bridge(
        mut self,
        options: gym_metrics_kit::bridge::MetricsBridgeOptions,
    ) -> Self {
        self.settings.metrics_bridge = Some(options);
        self
    }

    /// Also export this process's own resource use, read at each scrape
    /// (Linux; elsewhere this logs once that it has no effect), under the
    /// Prometheus client libraries' names, HELP and types, without labels:
    ///
    /// | family | TYPE | value |
    /// |---|---|---|
    /// | `process_cpu_seconds_total` | counter | user + system CPU seconds |
    /// | `process_resident_memory_bytes` | gauge | resident set size |
    /// | `process_virtual_memory_bytes` | gauge | virtual memory size |
    /// | `process_open_fds` | gauge | open file descriptors |
    /// | `process_max_fds` | gauge | `RLIMIT_NOFILE` soft limit (absent while unlimited) |
    /// | `process_threads` | gauge | OS threads |
    /// | `process_start_time_seconds` | gauge | start time, seconds since the Unix epoch |
    ///
    /// They are families of the one exposition (every format, gzip, the
    /// collector) written after the gym families in name order; a bridged
    /// `metrics` name that meets one is refused as for any of ours. The
    /// values come from `/proc` through the `procfs` crate (see
    /// [`gym_metrics_kit::process`] for why not `metrics-process`).
    ///
    /// ```
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().with_process_metrics().build()?;
    /// let text = handle.render();
    /// # #[cfg(target_os = "linux")]
    /// assert!(text.contains("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total "));
    /// # #[cfg(target_os = "linux")]
    /// assert!(text.contains("\nprocess_open_fds "));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn with_process_metrics(mut self) -> Self {
        self.settings.process_metrics = true;
        self
    }

    /// Also export the HTTP semantic conventions' old
    /// `http.server.duration` (milliseconds; `http_method`, `http_scheme`,
    /// `http_status_code`, `http_target` holding the route) beside
    /// `http.server.request.duration`, as `OTEL_SEMCONV_STABILITY_OPT_IN=http/dup`
    /// asks of OpenTelemetry's instrumentations: for dashboards and rules
    /// that read the old name, which Python's emit by default. Derived from
    /// the same counts at each scrape: the record path does not change.
    ///
    /// ```
    /// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new()
    ///     .with_old_http_server_duration()
    ///     .build()?;
    /// let ms_40 = std::time::Duration::from_millis(40);
    /// let request = HttpServerRequest::new(HttpMethod::Post, Some("/verify"), UrlScheme::Http, Some(200), ms_40);
    /// gym_metrics_api::backend::Recorder::record_http_server_request(&recorder, &request);
    /// let text = handle.render();
    /// assert!(text.contains(r#"http_server_duration_milliseconds_bucket{http_method="POST",http_scheme="http",http_status_code="200",http_target="/verify",otel_scope_name"#));
    /// assert!(text.contains("http_server_request_duration_seconds_count{"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn with_old_http_server_duration(mut self) -> Self {
        self.settings.http_dup = true;
        self
    }

    /// Also serve the application's own `prometheus::Registry` (feature
    /// `prometheus-registry`) in the same exposition, after ours (and after
    /// the `metrics` bridge's families): `gather()` is called at each scrape
    /// and its families are written by this crate's one writer, so they get
    /// the same content negotiation (text 0.0.4 or OpenMetrics), gzip and
    /// web configuration. Counters, gauges and histograms are served;
    /// summaries, untyped families and sample timestamps are left out
    /// (logged once). A family that meets one of ours (`target_info`,
    /// `gym_*`, `http_server_*`, `process_*` with
    /// [`PrometheusBuilder::with_process_metrics`]) is refused: by
    /// `build`/`install` with [`BuildError::RegistryClash`] if registered
    /// by then, else left out of every scrape, logged once.
    ///
    /// A `prometheus-client` registry is not supported: that crate offers
    /// only its own text encoder, which would be a second renderer (or its
    /// text parsed back); serve its `encode` output on a route of your own.
    ///
    /// ```
    /// let registry = prometheus::Registry::new();
    /// let jobs = prometheus::IntCounterVec::new(
    ///     prometheus::Opts::new("sandbox_jobs_total", "Sandbox jobs run."), &["provider"])?;
    /// registry.register(Box::new(jobs.clone()))?;
    /// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new().with_registry(registry).build()?;
    /// jobs.with_label_values(&["docker"]).inc_by(3);
    /// let text = handle.render();
    /// let expected = "# HELP sandbox_jobs_total Sandbox jobs run.\n\
    ///     \x23 TYPE sandbox_jobs_total counter\n\
    ///     sandbox_jobs_total{provider=\"docker\"} 3\n";
    /// assert!(text.ends_with(expected), "{text}"); // after ours
    ///
    /// let clash = prometheus::Registry::new();
    /// clash.register(Box::new(prometheus::Gauge::new("target_info", "mine")?))?;
    /// let e = gym_metrics_prom::PrometheusBuilder::new().with_registry(clash).build().unwrap_err();
    /// assert!(e.to_string().contains("\"target_info\""), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "prometheus-registry")]
    pub fn with_registry(mut self, registry: prometheus::Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Serve `/metrics` as the web configuration file at `path` says (the
    /// format of Prometheus' exporter-toolkit, as node_exporter's
    /// `--web.config.file`): over TLS with `tls_server_config` (`cert_file`,
    /// `key_file`, `client_ca_file`, `client_auth_type`, `min_version`,
    /// `max_version`), and only to the `basic_auth_users` (name: bcrypt
    /// hash). `GYM_METRICS_WEB_CONFIG_FILE` sets it in [`PrometheusBuilder::from_env`].
    /// The file is read by [`PrometheusBuilder::install`]; the certificate
    /// files again whenever they change (checked at each new connection), so
    /// a rotated certificate needs no restart.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("gym-web-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let file = dir.join("web.yml");
    /// std::fs::write(&file, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")?;
    /// let e = gym_metrics_prom::PrometheusBuilder::new()
    ///     .with_http_listener(([127, 0, 0, 1], 0))
    ///     .web_config_file(&file)
    ///     .install()
    ///     .unwrap_err();
    /// // No server.crt beside it: a start-up error naming the key and file.
    /// assert!(e.to_string().contains("tls_server_config.cert_file"), "{e}");
    /// assert!(e.to_string().contains("server.crt"), "{e}");
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "web-config")]
    pub fn web_config_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.web_config_file = Some(path.into());
        self
    }

    /// A recorder and its handle: nothing installed, nothing listening. Serve
    /// [`PrometheusHandle::render`] from your own server.
    ///
    /// # Errors
    /// [`BuildError::CompiledOff`] in a program built with the API's `off`
    /// feature (every record call compiled away: this recorder would never
    /// receive anything).
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new().build()?;
    /// recorder.record_verify_ms(40.0, true);
    /// assert!(handle.render().contains("gym_verify_success_rate{otel_scope_name=\"gym-metrics\""));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn build(self) -> Result<(PrometheusRecorder, PrometheusHandle), BuildError> {
        gym_metrics_api::backend::check_recording_compiled_in()?;
        let resource = Resource::new(
            &self.settings.role,
            self.settings.service_name.as_deref(),
            &self.settings.resource_attributes,
            &self.settings.gym,
        );
        let memory_profiling = self.settings.gym.memory_profiling(&self.settings.role);
        let metrics = GymMetrics::new(self.settings.role, self.settings.boundaries, self.native)
            .with_memory_profiling(memory_profiling);
        let metrics = Arc::new(metrics);
        let process = self.settings.process_metrics
            && gym_metrics_kit::process::available("gym-metrics-prom");
        let families = GymFamilies::new(
            Arc::clone(&metrics),
            &resource,
            process,
            self.settings.http_dup,
        );
        let families = Arc::new(families);
        let exposition = Exposition::new(Arc::clone(&families));
        let exposition = match &metrics.memory {
            Some(profiler) => exposition.with_later(MemoryFamilies::new(Arc::clone(profiler))),
            None => exposition,
        };
        let fleet_sd = metrics.fleet_sd.clone();
        #[cfg(feature = "metrics-bridge")]
        let (exposition, bridge) = match self.settings.metrics_bridge {
            Some(options) => {
                let (exposition, bridge) =
                    crate::metrics_bridge::attach(options, self.native, &families, exposition);
                (exposition, Some(bridge))
            }
            None => (exposition, None),
        };
        #[cfg(feature = "prometheus-registry")]
        let exposition = match self.registry {
            Some(registry) => {
                crate::exposition::app_registry::attach(registry, &families, exposition)?
            }
            None => exposition,
        };
        let handle = PrometheusHandle::new(exposition, fleet_sd);
        #[cfg(feature = "metrics-bridge")]
        let handle = match bridge {
            Some(bridge) => handle.with_metrics_recorder(bridge),
            None => handle,
        };
        Ok((
            PrometheusRecorder::new(metrics, self.settings.gym.span_groups())
                .with_exemplar_filter(self.settings.exemplar_filter),
            handle,
        ))
    }

    /// Installs the recorder into the facade, without a listener. When a
    /// NeMo Gym setting (`NEMO_GYM_OTEL_ENABLED=false`, `…_METRICS_ENABLED=false`)
    /// silences the backend, a recorder that records nothing is installed
    /// instead (the role is still declared) and the handle renders no gym
    /// samples; install logs one line saying so.
    ///
    /// # Errors
    /// [`BuildError::AlreadyInstalled`] if a recorder is already installed.
    ///
    /// ```
    /// let (handle, installation) = gym_metrics_prom::PrometheusBuilder::new().install_recorder()?;
    /// gym_metrics_api::record_verify_ms(40.0, true);
    /// assert!(installation.fleet_size().is_none());
    /// assert!(handle.render().contains("gym_verify_completed_total"));
    /// # Ok::<(), gym_metrics_prom::BuildError>(())
    /// ```
    pub fn install_recorder(self) -> Result<(PrometheusHandle, Installation), BuildError> {
        let install = Install::new(
            "gym-metrics-prom",
            &self.settings.gym,
            self.settings.role.clone(),
        );
        install.run(
            self,
            |builder| {
                let (recorder, handle) = builder.build()?;
                let bridge = metrics_bridge(&handle);
                Ok((recorder, handle, bridge))
            },
            |builder| Ok(builder.build()?.1),
        )
    }

    /// Installs the recorder and serves `GET /metrics` on a thread of its own
    /// (with its own tokio current-thread runtime: the application needs none).
    /// The listener stops, and the port is freed, when the guard is dropped.
    /// When a NeMo Gym setting silences the backend (see
    /// [`PrometheusBuilder::install_recorder`]), no port is opened at all
    /// ([`PrometheusGuard::is_serving`] is false).
    ///
    /// # Errors
    /// [`BuildError::Bind`] naming the address if it cannot be bound,
    /// [`BuildError::Resolve`] if the host does not resolve,
    /// [`BuildError::AlreadyInstalled`] if a recorder is already installed,
    /// `BuildError::WebConfig` naming the file and key when the web
    /// configuration, or a file it names, cannot be used.
    ///
    /// ```
    /// let guard = gym_metrics_prom::PrometheusBuilder::new()
    ///     .with_http_listener(([127, 0, 0, 1], 0))
    ///     .install()?;
    /// let addr = guard.local_addr();
    /// assert!(addr.ip().is_loopback() && addr.port() != 0);
    /// guard.shutdown()?; // the port is free again
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn install(self) -> Result<PrometheusGuard, BuildError> {
        let install = Install::new(
            "gym-metrics-prom",
            &self.settings.gym,
            self.settings.role.clone(),
        );
        let ((endpoint, handle), installation) = install.run(
            self,
            |builder| {
                // Before binding: a web configuration that cannot be used
                // must not leave a plain endpoint open.
                let protection = builder.protection()?;
                let listener = builder.listen.bind()?;
                let final_scrape_wait = builder.final_scrape_wait;
                let (recorder, handle) = builder.build()?;
                // Listening before installing: a failure leaves nothing installed.
                let endpoint =
                    Endpoint::start(listener, handle.clone(), final_scrape_wait, protection)?;
                let bridge = metrics_bridge(&handle);
                Ok((recorder, (Some(endpoint), handle), bridge))
            },
            // Gym's switch says export nothing: declare the role, open no port.
            |builder| Ok((None, builder.build()?.1)),
        )?;
        Ok(PrometheusGuard::new(endpoint, handle, installation))
    }
}

/// What `install` sets as the process's `metrics` recorder after ours: the
/// bridge, when the builder asked for it.
#[cfg(feature = "metrics-bridge")]
fn metrics_bridge(handle: &PrometheusHandle) -> impl ThenInstall<BuildError> + use<> {
    handle.metrics_recorder()
}

/// Without the feature, nothing.
#[cfg(not(feature = "metrics-bridge"))]
fn metrics_bridge(_: &PrometheusHandle) -> impl ThenInstall<BuildError> + use<> {}

impl PrometheusBuilder {
    /// The web configuration, loaded (its certificates read) now.
    fn protection(&self) -> Result<Protection, BuildError> {
        #[cfg(feature = "web-config")]
        if let Some(file) = &self.web_config_file {
            return Ok(Protection::load(file)?);
        }
        Ok(Protection::default())
    }
}

/// Every variable [`PrometheusBuilder::from_env`] reads.
fn variable_names() -> Vec<&'static str> {
    (crate::endpoint_env::VARIABLES.into_iter())
        .chain(GymEnv::VARIABLES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint_env::{HOST_VAR, PORT_VAR, VARIABLES};
    use gym_metrics_kit::env::{EnvVars, OtelEnv};

    #[test]
    fn env_sets_host_port_and_service_but_an_explicit_listener_wins() {
        let vars = EnvVars::from_lookup(&VARIABLES, |k| match k {
            k if k == HOST_VAR => Some("127.0.0.1".into()),
            k if k == PORT_VAR => Some("9100".into()),
            k if k == OtelEnv::SERVICE_NAME => Some("lab".into()),
            _ => None,
        });
        let env = EndpointEnv::read(&vars).unwrap();
        let b = PrometheusBuilder::new().apply_env(env);
        assert_eq!(
            b.listen,
            ListenAddress::HostPort {
                host: "127.0.0.1".into(),
                port: 9100
            }
        );
        assert_eq!(b.settings.service_name.as_deref(), Some("lab"));
        let b = b.with_http_listener(([127, 0, 0, 1], 0));
        assert_eq!(b.listen, ListenAddress::Socket(([127, 0, 0, 1], 0).into()));
    }

    #[test]
    fn http_dup_in_the_environment_adds_the_old_http_family() {
        let vars = EnvVars::from_pairs(&[(OtelEnv::SEMCONV_STABILITY_OPT_IN, "http/dup")]);
        let env = EndpointEnv::read(&vars).unwrap();
        let (recorder, handle) = PrometheusBuilder::new().apply_env(env).build().unwrap();
        let request = gym_metrics_api::HttpServerRequest::new(
            gym_metrics_api::HttpMethod::Get,
            None,
            gym_metrics_api::UrlScheme::Http,
            Some(200),
            Duration::from_millis(3),
        );
        gym_metrics_api::backend::Recorder::record_http_server_request(&recorder, &request);
        let text = handle.render();
        assert!(text.contains("\nhttp_server_duration_milliseconds_bucket{http_method=\"GET\",http_scheme=\"http\",http_status_code=\"200\",otel_scope_name=\"gym-metrics\",otel_scope_version=\""), "{text}");
        // Unset: the stable family only.
        let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
        gym_metrics_api::backend::Recorder::record_http_server_request(&recorder, &request);
        let text = handle.render();
        assert!(!text.contains("http_server_duration_"), "{text}");
        assert!(
            text.contains("http_server_request_duration_seconds_count{"),
            "{text}"
        );
    }
}
