//! The builder: every setting of the backend, each also an `OTEL_*` variable
//! ([`OtelBuilder::from_env`]), and its two exits, [`OtelBuilder::build`]
//! and [`OtelBuilder::install`].

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gym_metrics_api::backend::{Boundaries, BoundariesError};
use gym_metrics_api::Role;
use gym_metrics_kit::env::{EnvVars, GymEnv, PemFile, TlsEnv};
use gym_metrics_kit::install::{Install, ThenInstall};
use gym_metrics_kit::recording::{GymMetrics, GymRecorder, NativeConfig};
use gym_metrics_kit::redact::RedactedHeaders;
use gym_metrics_kit::settings::Settings;

use crate::export::console_writer::ConsoleWriter;
use crate::export::gym_encoding::GymEncoding;
use crate::export::pipeline::{gym_meter, meter_provider, Export, Sink};
use crate::instruments::verify::VerifyReading;
use crate::settings::collector_url::CollectorUrl;
use crate::settings::exporter_env::{
    Compression, ExporterEnv, ENV_VARIABLES, EXPORT_INTERVAL_EXPECTED, MIN_EXPORT_INTERVAL,
};
use crate::settings::protocol::ProtocolSetting;
use crate::settings::resource::build_resource;

use crate::{
    BuildError, ConfigError, ExemplarFilter, HistogramAggregation, MetricsExporter, OtelGuard,
    OtelRecorder, OtlpProtocol, TemporalityPreference,
};

/// Every variable the builder reads: NeMo Gym's beside the `OTEL_*` ones.
fn variable_names() -> Vec<&'static str> {
    ENV_VARIABLES.into_iter().chain(GymEnv::VARIABLES).collect()
}

/// Default `OTEL_METRIC_EXPORT_INTERVAL`: 10 s, not the specification's
/// 60 s. The Python reference implementation exports every 10 s, so both
/// paths give a dashboard the same resolution; and a gym server often lives
/// for less than a minute, so at 60 s most of its life would reach the
/// collector only in the final export.
pub(crate) const DEFAULT_EXPORT_INTERVAL: Duration = Duration::from_secs(10);
/// Default `OTEL_EXPORTER_OTLP_TIMEOUT`: 10 s, as the specification says.
pub(crate) const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default `OTEL_METRIC_EXPORT_TIMEOUT`: 30 s, as the specification says.
pub(crate) const DEFAULT_METRIC_EXPORT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default deadline of [`crate::OtelGuard::shutdown`]: 5 s.
pub(crate) const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Configures and starts the OpenTelemetry backend.
///
/// Defaults: OTLP over http/protobuf to `http://localhost:4318/v1/metrics`
/// (see [`OtelBuilder::protocol`] for builds without that transport),
/// export every 10 s (the specification says 60 s; see
/// [`OtelBuilder::export_interval`] for why 10), a 10 s OTLP timeout within
/// a 30 s export timeout, cumulative temporality, the catalogue's bucket
/// boundaries, a 5 s shutdown deadline, and the role
/// [`gym_metrics_api::Role::default_server`].
///
/// `Debug` prints every setting but the header values and the endpoint's
/// user-info and query values, which it redacts.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::Role;
/// use gym_metrics_otel::{MetricsExporter, OtelBuilder, OtlpProtocol};
///
/// let builder = OtelBuilder::new()
///     .role(Role::orchestrator())
///     .exporter(MetricsExporter::Otlp)
///     .protocol(OtlpProtocol::HttpProtobuf)
///     .endpoint("http://127.0.0.1:4318/v1/metrics")
///     .export_interval(Duration::from_secs(5))
///     .shutdown_timeout(Duration::from_secs(2))
///     .histogram_boundaries(vec![10.0, 100.0, 1000.0])?;
/// // `builder.install()?` would start exporting and return the guard; until
/// // then it only holds the settings.
/// assert!(format!("{builder:?}").contains("Boundaries([10.0, 100.0, 1000.0])"));
/// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
/// ```
#[derive(Clone)]
pub struct OtelBuilder {
    /// What both backends' builders set alike.
    settings: Settings,
    exporter: MetricsExporter,
    /// The OTLP protocol, and the variable or setting that chose it.
    protocol: ProtocolSetting,
    endpoint: Option<CollectorUrl>,
    headers: Vec<(String, String)>,
    /// The request compression, or the value [`OtelBuilder::compression`]
    /// was given that is none of the names (refused by `build`).
    compression: Compression,
    export_timeout: Duration,
    metric_export_timeout: Duration,
    export_interval: Duration,
    shutdown_timeout: Duration,
    temporality: TemporalityPreference,
    histogram_aggregation: HistogramAggregation,
    console_writer: Option<ConsoleWriter>,
    /// OTLP over TLS (issue 17): CA bundle, client identity, gRPC insecure.
    tls: TlsEnv,
}

impl Default for OtelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl OtelBuilder {
    /// The defaults, reading no environment variable.
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::None).build()?;
    /// assert_eq!(recorder.role(), &gym_metrics_api::Role::default_server());
    /// guard.shutdown()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> Self {
        Self {
            settings: Settings::default(),
            exporter: MetricsExporter::default(),
            protocol: ProtocolSetting::default_of(OtlpProtocol::default()),
            endpoint: None,
            headers: Vec::new(),
            compression: Compression::None,
            export_timeout: DEFAULT_EXPORT_TIMEOUT,
            metric_export_timeout: DEFAULT_METRIC_EXPORT_TIMEOUT,
            export_interval: DEFAULT_EXPORT_INTERVAL,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            temporality: TemporalityPreference::default(),
            histogram_aggregation: HistogramAggregation::default(),
            console_writer: None,
            tls: TlsEnv::default(),
        }
    }

    /// The defaults overridden by the process environment: see
    /// [`OtelBuilder::from_env_lookup`] for the variables.
    ///
    /// # Errors
    /// A variable with a bad value, or one that is not UTF-8, naming the
    /// variable and the value (secrets redacted).
    ///
    /// ```
    /// // OTEL_METRIC_EXPORT_INTERVAL=250 in the process environment
    /// # // SAFETY: the example has not started a thread yet.
    /// # unsafe { std::env::set_var("OTEL_METRIC_EXPORT_INTERVAL", "250") };
    /// let builder = gym_metrics_otel::OtelBuilder::from_env()?;
    /// assert!(format!("{builder:?}").contains("export_interval: 250ms"));
    /// # Ok::<(), gym_metrics_otel::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<Self, ConfigError> {
        let vars = EnvVars::from_process(&variable_names())?;
        Self::from_env_lookup(|name| vars.get(name))
    }

    /// The defaults overridden by the variables `lookup` returns; an empty
    /// value counts as unset. The signal-specific `..._METRICS_...` variable
    /// wins over the generic one.
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `OTEL_SDK_DISABLED` | `true`: same as exporter `none` |
    /// | `OTEL_SERVICE_NAME` | base of `service.name` (default `nemo-gym`) |
    /// | `OTEL_RESOURCE_ATTRIBUTES` | `k=v,...` extra resource attributes |
    /// | `OTEL_SEMCONV_STABILITY_OPT_IN` | `http/dup`: the old `http.server.duration` too (see [`OtelBuilder::with_old_http_server_duration`]) |
    /// | `OTEL_METRICS_EXEMPLAR_FILTER` | `trace_based` (default), `always_on`, `always_off` (see [`ExemplarFilter`]) |
    /// | `OTEL_METRICS_EXPORTER` | `otlp` (default), `console`, `none` |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL` | `http/protobuf` (default), `http/json`, `grpc`; each needs its Cargo feature (see [`OtelBuilder::protocol`]) |
    /// | `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` | URL used as is |
    /// | `OTEL_EXPORTER_OTLP_ENDPOINT` | base URL (`/v1/metrics` appended to its path for http, before its query) |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]HEADERS` | `k=v,...` request headers |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT` | OTLP timeout of one export, retries included, ms (default 10000) |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION` | `gzip` or `none` (default); see [`OtelBuilder::compression`] |
    /// | `OTEL_METRIC_EXPORT_TIMEOUT` | one whole export, ms (default 30000) |
    /// | `OTEL_METRIC_EXPORT_INTERVAL` | ms between exports (default 10000, at least 50) |
    /// | `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` | `cumulative` (default), `delta`, `lowmemory` |
    /// | `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` | `explicit_bucket_histogram` (default), `base2_exponential_bucket_histogram` |
    /// | `GYM_METRICS_OTEL_SHUTDOWN_TIMEOUT` | shutdown deadline, ms (default 5000) |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]CERTIFICATE` | PEM CA bundle trusted instead of the platform's store |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_CERTIFICATE` | PEM client certificate (chain) for mTLS |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_KEY` | PEM private key of the client certificate |
    /// | `OTEL_EXPORTER_OTLP_[METRICS_]INSECURE` | gRPC: `true` means plaintext for an endpoint without a scheme (default `false`: TLS) |
    ///
    /// And NeMo Gym's settings, `NEMO_GYM_OTEL_<KEY>` else `NEMO_LENS_<KEY>`
    /// (see [`GymEnv`]): `ENABLED` / `METRICS_ENABLED` false installs the
    /// role and exports nothing; `EXPORTER` (`otlp`, `console`) wins over
    /// `OTEL_METRICS_EXPORTER` (not over `OTEL_SDK_DISABLED`), and when Gym's
    /// variables select OTLP with no protocol set the protocol is Gym's
    /// default, gRPC; `RUN_ID` (else `SLURM_JOB_ID`) is `nemo.run.id`;
    /// `SERVICE_NAME_PER_SERVER` and `SPAN_GROUPS` as in Gym.
    ///
    /// Every value is also a builder setting, and explicit settings win;
    /// nothing else reads the process environment (the exporter is ours).
    ///
    /// # Errors
    /// A variable with a bad value, naming the variable and the value
    /// (header values and URL user-info and query values redacted).
    ///
    /// ```
    /// use gym_metrics_otel::OtelBuilder;
    /// let env = |name: &str| match name {
    ///     "OTEL_METRIC_EXPORT_INTERVAL" => Some("soon".to_string()),
    ///     _ => None,
    /// };
    /// let err = OtelBuilder::from_env_lookup(env).unwrap_err();
    /// assert!(err.to_string().contains("OTEL_METRIC_EXPORT_INTERVAL=\"soon\""));
    /// ```
    pub fn from_env_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let vars = EnvVars::from_lookup(&variable_names(), lookup);
        let tls = TlsEnv::read(&vars)?;
        let env = ExporterEnv::read(&vars)?;
        // NeMo Gym's settings: over OTEL_METRICS_EXPORTER, and Gym's protocol.
        let gym = GymEnv::read(|name| vars.get(name))?;
        let (exporter, protocol) = crate::settings::gym_settings::exporter_and_protocol(
            &gym,
            env.exporter,
            env.protocol.as_ref().map(|p| p.protocol),
        );
        let mut defaults = Self::new();
        defaults.settings.gym = gym;
        defaults.settings.apply_env(env.resource);
        // A protocol a variable chose must be built; a default (ours, or
        // Gym's gRPC) may give way to one that is.
        let protocol = match (env.protocol, protocol) {
            (Some(chosen), _) => chosen,
            (None, Some(gyms)) => ProtocolSetting::default_of(gyms),
            (None, None) => defaults.protocol.clone(),
        };
        Ok(Self {
            exporter: exporter.unwrap_or(defaults.exporter),
            protocol,
            endpoint: env.endpoint,
            headers: env.headers.unwrap_or_default(),
            compression: env.compression.unwrap_or_default(),
            export_timeout: env.export_timeout.unwrap_or(defaults.export_timeout),
            metric_export_timeout: env
                .metric_export_timeout
                .unwrap_or(defaults.metric_export_timeout),
            export_interval: env.export_interval.unwrap_or(defaults.export_interval),
            shutdown_timeout: env.shutdown_timeout.unwrap_or(defaults.shutdown_timeout),
            temporality: env.temporality.unwrap_or(defaults.temporality),
            histogram_aggregation: env
                .histogram_aggregation
                .unwrap_or(defaults.histogram_aggregation),
            tls,
            ..defaults
        })
    }

    /// The role this process declares (orchestrator or server).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().role(gym_metrics_api::Role::orchestrator());
    /// assert!(format!("{b:?}").contains("role: Orchestrator"));
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.settings.role = role;
        self
    }

    /// NeMo Gym's settings, as [`GymEnv::read`] gives them: the run id,
    /// `service.name` per server, the span groups, and whether anything is
    /// exported. ([`OtelBuilder::from_env`] reads them, and also applies
    /// Gym's exporter and protocol, which this setter leaves alone.)
    ///
    /// ```
    /// use gym_metrics_kit::env::GymEnv;
    /// let gym = GymEnv::read(|n| (n == "NEMO_GYM_OTEL_RUN_ID").then(|| "run-7".to_string()))?;
    /// let b = gym_metrics_otel::OtelBuilder::new().gym_env(gym);
    /// assert!(format!("{b:?}").contains("run-7"));
    /// # Ok::<(), gym_metrics_otel::ConfigError>(())
    /// ```
    pub fn gym_env(mut self, gym: GymEnv) -> Self {
        self.settings.gym = gym;
        self
    }

    /// OTLP, console, or none (`OTEL_METRICS_EXPORTER`).
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let b = OtelBuilder::new().exporter(MetricsExporter::Console);
    /// assert!(format!("{b:?}").contains("exporter: Console"));
    /// ```
    pub fn exporter(mut self, exporter: MetricsExporter) -> Self {
        self.exporter = exporter;
        self
    }

    /// http/protobuf, http/json or gRPC
    /// (`OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL`).
    ///
    /// Each transport is a Cargo feature: `http-proto`, `http-json` and
    /// `grpc`, all on by default. A protocol set here or by the variable
    /// whose feature is off makes [`OtelBuilder::build`] fail with
    /// [`BuildError::TransportNotBuilt`]. It names the variable, its value
    /// and the feature; nothing falls back in silence.
    ///
    /// With no protocol set, the default (http/protobuf, or gRPC when NeMo
    /// Gym's variables select OTLP) is used if it is built. Otherwise the
    /// first built one of http/protobuf, gRPC and http/json is used, and
    /// logged. A build without any transport refuses exporter `otlp` with
    /// [`BuildError::TransportNotBuilt`]; `console` and `none` still work.
    ///
    /// ```
    /// use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
    /// let b = OtelBuilder::new().protocol(OtlpProtocol::Grpc);
    /// assert!(format!("{b:?}").contains("protocol: Grpc"));
    /// ```
    pub fn protocol(mut self, protocol: OtlpProtocol) -> Self {
        self.protocol = ProtocolSetting::chosen(protocol, "protocol", protocol.name());
        self
    }

    /// The collector URL, used as is (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`):
    /// the full path for http/protobuf (`http://host:4318/v1/metrics`), the
    /// host and port for gRPC (`http://host:4317`). `https://` needs the
    /// `tls` feature (on by default; see [`OtelBuilder::certificate`]); for
    /// gRPC a bare `host:port` means TLS unless [`OtelBuilder::insecure`].
    /// A port outside 1 to 65535, a user name or password with an unescaped
    /// `?`, `#` or `/`, and anything else is rejected by
    /// [`OtelBuilder::build`] and [`OtelBuilder::install`]. A query string
    /// (`?api_key=…`) is sent as given; it and the user-info are redacted
    /// wherever the URL is printed.
    ///
    /// OTLP/HTTP follows no redirect: a collector's `3xx` answer is an
    /// export failure, logged with its status, and nothing is sent to the
    /// address it names (the payload carries the headers, API keys
    /// included).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().endpoint("http://127.0.0.1:4318/v1/metrics");
    /// assert!(format!("{b:?}").contains(r#"url: "http://127.0.0.1:4318/v1/metrics""#));
    /// let b = gym_metrics_otel::OtelBuilder::new().endpoint("http://c:4318/v1/metrics?api_key=s3cret");
    /// assert!(!format!("{b:?}").contains("s3cret"));
    /// ```
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(CollectorUrl::Exact {
            source: "endpoint",
            url: url.into(),
        });
        self
    }

    /// Headers sent with every export, e.g. for authentication
    /// (`OTEL_EXPORTER_OTLP_METRICS_HEADERS`). Replaces earlier headers.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().headers([("authorization", "Bearer t0k")]);
    /// let printed = format!("{b:?}");
    /// assert!(printed.contains("authorization") && !printed.contains("t0k")); // values redacted
    /// ```
    pub fn headers<K: Into<String>, V: Into<String>>(
        mut self,
        headers: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.headers = headers
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// The compression of OTLP requests, `"gzip"` or `"none"` (the default;
    /// `OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION`, case-insensitive): with
    /// `gzip`, OTLP/HTTP bodies are gzipped and sent with
    /// `Content-Encoding: gzip`, and gRPC messages are sent gzipped
    /// (`grpc-encoding: gzip`).
    ///
    /// # Errors
    /// Any other value, naming the setting and the value.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().compression("gzip")?;
    /// assert!(format!("{b:?}").contains("compression: Gzip"));
    /// let e = gym_metrics_otel::OtelBuilder::new().compression("zstd").unwrap_err();
    /// assert!(e.to_string().contains("compression") && e.to_string().contains("zstd"));
    /// # Ok::<(), gym_metrics_otel::ConfigError>(())
    /// ```
    pub fn compression(mut self, compression: &str) -> Result<Self, ConfigError> {
        self.compression = Compression::parse("compression", compression)?;
        Ok(self)
    }

    /// The OTLP exporter's timeout: how long one request may take, and the
    /// deadline after which a failed export is not retried
    /// (`OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT`, default 10 s). Capped by
    /// [`OtelBuilder::metric_export_timeout`]. Zero is rejected by
    /// [`OtelBuilder::build`].
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().export_timeout(std::time::Duration::from_secs(2));
    /// assert!(format!("{b:?}").contains(" export_timeout: 2s"));
    /// ```
    pub fn export_timeout(mut self, timeout: Duration) -> Self {
        self.export_timeout = timeout;
        self
    }

    /// The most one periodic export may take (`OTEL_METRIC_EXPORT_TIMEOUT`,
    /// default 30 s, as the specification says). The SDK's reader enforces
    /// no timeout of its own, so this one caps the OTLP exporter's
    /// ([`OtelBuilder::export_timeout`]): each request, and the deadline
    /// after which a failed export is not retried, is the smaller of the
    /// two. (A request under way at that deadline still runs to its own
    /// timeout: a blocking HTTP request cannot be cut short.) Zero is
    /// rejected by [`OtelBuilder::build`].
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().metric_export_timeout(std::time::Duration::from_secs(5));
    /// assert!(format!("{b:?}").contains("metric_export_timeout: 5s"));
    /// ```
    pub fn metric_export_timeout(mut self, timeout: Duration) -> Self {
        self.metric_export_timeout = timeout;
        self
    }

    /// Time between exports (`OTEL_METRIC_EXPORT_INTERVAL`, default 10 s).
    ///
    /// The specification's default is 60 s; this backend keeps 10 s, as the
    /// Python reference implementation does, so that both give a dashboard
    /// the same resolution, and because a gym server often lives for less
    /// than a minute: at 60 s, most of its life would reach the collector
    /// only in its final export. Less than 50 ms is rejected by
    /// [`OtelBuilder::build`] (and by [`OtelBuilder::from_env`] for the
    /// variable), naming the setting: faster exports only load the
    /// collector, and such a value is most likely a unit mistaken.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let b = OtelBuilder::new().export_interval(Duration::from_millis(500));
    /// assert!(format!("{b:?}").contains("export_interval: 500ms"));
    /// let too_fast = OtelBuilder::new().exporter(MetricsExporter::None)
    ///     .export_interval(Duration::from_millis(1));
    /// assert!(too_fast.build().unwrap_err().to_string().contains("export_interval"));
    /// ```
    pub fn export_interval(mut self, interval: Duration) -> Self {
        self.export_interval = interval;
        self
    }

    /// The deadline of [`crate::OtelGuard::shutdown`] and of dropping the
    /// guard (default 5 s).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().shutdown_timeout(std::time::Duration::from_secs(1));
    /// assert!(format!("{b:?}").contains("shutdown_timeout: 1s"));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Explicit bucket boundaries of both duration histograms, in ms.
    ///
    /// # Errors
    /// A list [`Boundaries::new`] refuses (empty, a bound not finite, negative,
    /// under a nanosecond or past 584 years, or not increasing in whole nanoseconds).
    ///
    /// ```
    /// use gym_metrics_otel::OtelBuilder;
    /// assert!(OtelBuilder::new().histogram_boundaries(vec![1.0, 10.0]).is_ok());
    /// assert!(OtelBuilder::new().histogram_boundaries(vec![10.0, 1.0]).is_err());
    /// ```
    pub fn histogram_boundaries(mut self, bounds: Vec<f64>) -> Result<Self, BoundariesError> {
        self.settings.boundaries = Boundaries::new(bounds)?;
        Ok(self)
    }

    /// Cumulative (default), delta or low-memory temporality
    /// (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
    ///
    /// ```
    /// use gym_metrics_otel::{OtelBuilder, TemporalityPreference};
    /// let b = OtelBuilder::new().temporality(TemporalityPreference::Delta);
    /// assert!(format!("{b:?}").contains("temporality: Delta"));
    /// ```
    pub fn temporality(mut self, temporality: TemporalityPreference) -> Self {
        self.temporality = temporality;
        self
    }

    /// Explicit buckets (default) or base-2 exponential histograms
    /// (`OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`).
    ///
    /// ```
    /// use gym_metrics_otel::{HistogramAggregation, OtelBuilder};
    /// let b = OtelBuilder::new().histogram_aggregation(HistogramAggregation::Base2Exponential);
    /// assert!(format!("{b:?}").contains("histogram_aggregation: Base2Exponential"));
    /// ```
    pub fn histogram_aggregation(mut self, aggregation: HistogramAggregation) -> Self {
        self.histogram_aggregation = aggregation;
        self
    }

    /// The base of `service.name` (`OTEL_SERVICE_NAME`, default `nemo-gym`);
    /// the exported name is `<base>/<role name>`.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().service_name("lab");
    /// assert!(format!("{b:?}").contains(r#"service_name: Some("lab")"#));
    /// ```
    pub fn service_name(mut self, base: impl Into<String>) -> Self {
        self.settings.service_name = Some(base.into());
        self
    }

    /// Adds a resource attribute (as `OTEL_RESOURCE_ATTRIBUTES` does), after
    /// the earlier ones. `service.name`, `service.instance.id` and the `gym.*`
    /// role attributes are always the backend's own.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().resource_attribute("deployment.environment", "dev");
    /// assert!(format!("{b:?}").contains(r#"("deployment.environment", "dev")"#));
    /// ```
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings
            .resource_attributes
            .push((key.into(), value.into()));
        self
    }

    /// Which timed records take their span as an exemplar
    /// (`OTEL_METRICS_EXEMPLAR_FILTER`): `TraceBased` (the default) keeps a
    /// timer's started inside a sampled span, newest per bucket.
    ///
    /// ```
    /// use gym_metrics_otel::{ExemplarFilter, OtelBuilder};
    /// let b = OtelBuilder::new().exemplar_filter(ExemplarFilter::AlwaysOff);
    /// assert!(format!("{b:?}").contains("AlwaysOff"));
    /// ```
    pub fn exemplar_filter(mut self, filter: ExemplarFilter) -> Self {
        self.settings.exemplar_filter = filter;
        self
    }

    /// Where the console exporter writes its JSON lines (default: standard output).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().console_writer(std::io::stderr());
    /// assert!(format!("{b:?}").contains("console_writer: Some(ConsoleWriter)"));
    /// ```
    pub fn console_writer(mut self, writer: impl Write + Send + 'static) -> Self {
        self.console_writer = Some(ConsoleWriter::new(writer));
        self
    }

    /// Also export this process's own resource use (Linux; elsewhere this
    /// logs once that it has no effect), as OpenTelemetry's `process.*`
    /// semantic conventions on our meter, observed at each collection:
    ///
    /// | instrument | kind | unit | attributes |
    /// |---|---|---|---|
    /// | `process.cpu.time` | counter | `s` | `cpu.mode` = `user`, `system` |
    /// | `process.memory.usage` | up-down counter | `By` (resident) | |
    /// | `process.memory.virtual` | up-down counter | `By` | |
    /// | `process.thread.count` | up-down counter | `{thread}` | |
    /// | `process.unix.file_descriptor.count` | up-down counter | `{file_descriptor}` | |
    /// | `process.uptime` | gauge | `s` | |
    ///
    /// The Prometheus backend's `process_max_fds` has no convention and no
    /// instrument here; its `process_start_time_seconds` is
    /// `process.uptime` here. Values come from `/proc` through the `procfs`
    /// crate (see [`gym_metrics_kit::process`]).
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    /// # #[derive(Clone)] struct W(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    /// # impl std::io::Write for W {
    /// #     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().extend_from_slice(b); Ok(b.len()) }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// let (_recorder, guard) = OtelBuilder::new()
    ///     .exporter(MetricsExporter::Console)
    ///     .console_writer(W(out.clone()))
    ///     .with_process_metrics()
    ///     .build()?;
    /// guard.shutdown()?; // one export, with the process instruments
    /// let json = String::from_utf8(out.lock().unwrap().clone())?;
    /// # #[cfg(target_os = "linux")]
    /// assert!(json.contains(r#""name":"process.unix.file_descriptor.count""#), "{json}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_process_metrics(mut self) -> Self {
        self.settings.process_metrics = true;
        self
    }

    /// Also export the HTTP semantic conventions' old
    /// `http.server.duration` (milliseconds; `http.method`, `http.scheme`,
    /// `http.status_code`, `http.target` holding the route) beside
    /// `http.server.request.duration`, as `OTEL_SEMCONV_STABILITY_OPT_IN=http/dup`
    /// asks of OpenTelemetry's instrumentations (and [`OtelBuilder::from_env`]
    /// reads): for dashboards and rules that read the old name, which
    /// Python's emit by default. Each request is then recorded in both.
    ///
    /// ```
    /// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    /// # #[derive(Clone)] struct W(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    /// # impl std::io::Write for W {
    /// #     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().extend_from_slice(b); Ok(b.len()) }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// let (recorder, guard) = OtelBuilder::new()
    ///     .exporter(MetricsExporter::Console)
    ///     .console_writer(W(out.clone()))
    ///     .with_old_http_server_duration()
    ///     .build()?;
    /// let ms_40 = std::time::Duration::from_millis(40);
    /// let request = HttpServerRequest::new(HttpMethod::Post, Some("/verify"), UrlScheme::Http, Some(200), ms_40);
    /// gym_metrics_api::backend::Recorder::record_http_server_request(&recorder, &request);
    /// guard.shutdown()?;
    /// let json = String::from_utf8(out.lock().unwrap().clone())?;
    /// assert!(json.contains(r#""name":"http.server.duration""#), "{json}");
    /// assert!(json.contains(r#""key":"http.target""#), "{json}");
    /// assert!(json.contains(r#""name":"http.server.request.duration""#), "{json}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_old_http_server_duration(mut self) -> Self {
        self.settings.http_dup = true;
        self
    }

    // ---- OTLP over TLS (issue 17) ----

    /// A PEM CA bundle to verify the collector's certificate with, instead
    /// of the platform's trust store
    /// (`OTEL_EXPORTER_OTLP_[METRICS_]CERTIFICATE`). Read and checked by
    /// [`OtelBuilder::build`]: a missing or unreadable file, or one without a
    /// certificate, is an error naming the setting and the path. Needs the
    /// `tls` feature (on by default).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new()
    ///     .endpoint("https://collector.example:4318/v1/metrics")
    ///     .certificate("/etc/gym/collector-ca.pem");
    /// # let _ = b;
    /// ```
    pub fn certificate(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.certificate = Some(PemFile::new("certificate", path));
        self
    }

    /// The PEM client certificate (chain, leaf first) for mTLS
    /// (`OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_CERTIFICATE`); needs
    /// [`OtelBuilder::client_key`] too. Checked by [`OtelBuilder::build`]
    /// like [`OtelBuilder::certificate`], and against its key.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new()
    ///     .client_certificate("/etc/gym/client.pem")
    ///     .client_key("/etc/gym/client.key");
    /// # let _ = b;
    /// ```
    pub fn client_certificate(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.client_certificate = Some(PemFile::new("client_certificate", path));
        self
    }

    /// The PEM private key (PKCS#8, PKCS#1 or SEC1) of
    /// [`OtelBuilder::client_certificate`]
    /// (`OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_KEY`). A key that does not
    /// match the certificate is an error of [`OtelBuilder::build`]; the key
    /// itself is never printed.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().client_key("/etc/gym/client.key");
    /// # let _ = b;
    /// ```
    pub fn client_key(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.client_key = Some(PemFile::new("client_key", path));
        self
    }

    /// gRPC only, as the specification says: `true` exports in plaintext to
    /// an endpoint given without a scheme (`collector:4317`), which
    /// otherwise means TLS (`OTEL_EXPORTER_OTLP_[METRICS_]INSECURE`, default
    /// `false`). An `http://` or `https://` scheme always wins, and OTLP/HTTP
    /// always follows its URL's scheme.
    ///
    /// ```
    /// use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
    /// let b = OtelBuilder::new()
    ///     .protocol(OtlpProtocol::Grpc)
    ///     .endpoint("otel-sidecar:4317")
    ///     .insecure(true);
    /// # let _ = b;
    /// ```
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.tls.insecure = insecure;
        self
    }

    // ---- end of OTLP over TLS ----

    /// Also bridge the `metrics` crate (feature `metrics-bridge`):
    /// `metrics::counter!`, `gauge!` and `histogram!` become SDK instruments
    /// of the scope `metrics` on this backend's meter provider (same
    /// resource, exporter, interval, temporality and shutdown flush as the
    /// gym instruments), with `options`' bucket rules and cardinality limit.
    /// `install` installs it as the process's `metrics` recorder; `build`
    /// hands it out ([`OtelGuard::metrics_recorder`]). A setting rather than
    /// something the feature does by itself: Cargo unifies features, and a
    /// dependency turning the feature on must not take the process's one
    /// `metrics` recorder slot from an application that fills it otherwise.
    ///
    /// ```no_run
    /// use gym_metrics_otel::{HistogramMatcher, MetricsBridgeOptions};
    /// let options = MetricsBridgeOptions::new()
    ///     .histogram_buckets(HistogramMatcher::Prefix("sandbox.".into()), vec![0.1, 1.0, 10.0])?;
    /// let guard = gym_metrics_otel::OtelBuilder::from_env()?
    ///     .with_metrics_bridge(options)
    ///     .install()?;
    /// metrics::histogram!("sandbox.start", "provider" => "docker").record(0.8);
    /// guard.shutdown()?; // exports sandbox.start with the bounds 0.1, 1, 10
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

    /// Starts the pipeline without touching the process-wide facade: the
    /// recorder is yours to call (or to install). With exporter `none` the
    /// recorder aggregates and nothing is exported.
    ///
    /// # Errors
    /// An invalid setting (a zero interval or timeout, an endpoint that is
    /// not an `http://` or `https://` URL, a bad header, a TLS file that is
    /// missing, unreadable, holds no certificate or key, or a client key that
    /// does not match its certificate), an exporter that could not be built,
    /// [`BuildError::TransportNotBuilt`] for an OTLP protocol whose Cargo
    /// feature is off, or [`BuildError::CompiledOff`] in a program built with
    /// the API's `off` feature.
    ///
    /// ```
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let (recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::Console)
    ///     .console_writer(std::io::sink())
    ///     .build()?;
    /// recorder.record_rollout_duration_ms(1200.0);
    /// guard.shutdown()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> Result<(OtelRecorder, OtelGuard), BuildError> {
        gym_metrics_api::backend::check_recording_compiled_in()?;
        #[cfg(all(feature = "tls", any(feature = "http-proto", feature = "http-json")))]
        crate::export::tls::install_process_default_provider();
        if self.export_interval < MIN_EXPORT_INTERVAL {
            return Err(ConfigError::invalid(
                "export_interval",
                format!("{:?}", self.export_interval),
                EXPORT_INTERVAL_EXPECTED,
            )
            .into());
        }
        for (setting, value) in [
            ("export_timeout", self.export_timeout),
            ("metric_export_timeout", self.metric_export_timeout),
        ] {
            if value.is_zero() {
                return Err(ConfigError::invalid(setting, "0ms", "a positive duration").into());
            }
        }
        // A `service.instance.id` the user gave (e.g. a pod name) is kept, as
        // gym-metrics-prom does; otherwise each process gets a fresh one.
        let instance_id = (self.settings.resource_attributes.iter())
            .find(|(key, _)| key == "service.instance.id")
            .map(|(_, id)| id.clone())
            .unwrap_or_else(gym_metrics_kit::resource::new_instance_id);
        let resource = build_resource(
            &self.settings.role,
            self.settings.service_name.as_deref(),
            &self.settings.resource_attributes,
            instance_id,
            &self.settings.gym,
        );
        let exporting = self.exporter != MetricsExporter::None;
        let memory_profiling = self
            .settings
            .gym
            .memory_profiling(&self.settings.role)
            .filter(|_| exporting);
        let sink = match self.exporter {
            MetricsExporter::None => Sink::None,
            MetricsExporter::Console => Sink::Console(self.console_writer.clone()),
            MetricsExporter::Otlp => self.otlp_sink()?,
        };
        // The one recording core, as on the Prometheus backend; native
        // buckets at the default schema feed the exponential histograms.
        let metrics = GymMetrics::new(
            self.settings.role.clone(),
            self.settings.boundaries.clone(),
            NativeConfig::default(),
        )
        // Gym's orchestrator profiles only while telemetry exports.
        .with_memory_profiling(memory_profiling);
        let metrics = Arc::new(metrics);
        let verifications = Arc::new(VerifyReading::new(Arc::clone(&metrics)));
        let gym = GymEncoding::new(
            Arc::clone(&metrics),
            Arc::clone(&verifications),
            self.temporality,
            self.histogram_aggregation,
            self.settings.http_dup,
        );
        let export = Export {
            sink,
            interval: self.export_interval,
            temporality: self.temporality,
            gym: Arc::new(gym),
        };
        #[cfg(feature = "metrics-bridge")]
        let bridge_limit = self.settings.metrics_bridge.as_ref().map(|f| f.limit());
        let views = |provider: opentelemetry_sdk::metrics::MeterProviderBuilder| {
            #[cfg(feature = "metrics-bridge")]
            if let Some(limit) = bridge_limit {
                return provider
                    .with_view(crate::instruments::metrics_bridge::cardinality_view(limit));
            }
            provider
        };
        let provider = meter_provider(resource, export, views)?;
        let meter = gym_meter(&provider);
        crate::instruments::verify::register(&meter, &verifications);
        if self.settings.process_metrics && gym_metrics_kit::process::available("gym-metrics-otel")
        {
            crate::instruments::process::register(&meter);
        }
        if let Some(profiler) = &metrics.memory {
            crate::instruments::memory::register(&meter, profiler);
        }
        let recorder = GymRecorder::new(Arc::clone(&metrics), self.settings.gym.span_groups())
            .with_exemplar_filter(self.settings.exemplar_filter);
        let guard = OtelGuard::new(Some(provider.clone()), self.shutdown_timeout)
            .with_memory_profiler(metrics.memory.clone());
        #[cfg(feature = "metrics-bridge")]
        let guard = match self.settings.metrics_bridge {
            Some(options) => guard.with_metrics_recorder(
                crate::instruments::metrics_bridge::attach(options, &provider),
            ),
            None => guard,
        };
        Ok((recorder, guard))
    }

    /// Starts the pipeline and installs its recorder into the facade
    /// (`gym_metrics_api::install`). With exporter `none` (or
    /// `OTEL_SDK_DISABLED=true`, or NeMo Gym's `…_ENABLED` /
    /// `…_METRICS_ENABLED` false) nothing is started and a recorder that
    /// records nothing is installed: the role is declared as with any
    /// backend, so `gym_metrics_api::role()` and the guard's `fleet_size()`
    /// answer as they would with an exporter.
    ///
    /// # Errors
    /// As [`OtelBuilder::build`], and [`BuildError::AlreadyInstalled`] when a
    /// recorder is already installed in this process; with
    /// `OtelBuilder::with_metrics_bridge`, `BuildError::MetricsRecorderTaken`
    /// when another `metrics` recorder is (the gym-metrics recorder is
    /// installed all the same, as on the Prometheus backend).
    ///
    /// ```no_run
    /// use gym_metrics_api::Role;
    /// use gym_metrics_otel::OtelBuilder;
    /// let guard = OtelBuilder::from_env()?.role(Role::orchestrator()).install()?;
    /// if let Some(fleet) = guard.fleet_size() {
    ///     fleet.set(4);
    /// }
    /// gym_metrics_api::record_verify(std::time::Duration::from_millis(40), true);
    /// guard.shutdown()?; // final export, bounded by the shutdown timeout
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn install(self) -> Result<OtelGuard, BuildError> {
        let install = Install::new(
            "gym-metrics-otel",
            &self.settings.gym,
            self.settings.role.clone(),
        )
        .silenced_also(self.exporter == MetricsExporter::None);
        let (guard, installation) = install.run(
            self,
            |builder| {
                let (recorder, guard) = builder.build()?;
                let bridge = metrics_bridge(&guard);
                Ok((recorder, guard, bridge))
            },
            |builder| Ok(OtelGuard::new(None, builder.shutdown_timeout)),
        )?;
        Ok(guard.with_installation(installation))
    }
}

impl OtelBuilder {
    /// OTLP to the collector, over the protocol's transport.
    ///
    /// # Errors
    /// [`BuildError::TransportNotBuilt`]: the protocol's transport is not built.
    #[cfg(any(feature = "grpc", feature = "http-proto", feature = "http-json"))]
    fn otlp_sink(&self) -> Result<Sink, BuildError> {
        Ok(Sink::Otlp(Box::new(crate::export::otlp::Otlp {
            transport: self.protocol.transport()?,
            endpoint: self.endpoint.clone(),
            headers: self.headers.clone(),
            timeout: self.export_timeout.min(self.metric_export_timeout),
            // Checked by `build`, which calls this.
            compression: self.compression,
            tls: self.tls.clone(),
        })))
    }

    /// A build without any OTLP transport: always
    /// [`BuildError::TransportNotBuilt`].
    #[cfg(not(any(feature = "grpc", feature = "http-proto", feature = "http-json")))]
    fn otlp_sink(&self) -> Result<Sink, BuildError> {
        match self.protocol.transport()? {}
    }
}

/// What `install` sets as the process's `metrics` recorder after ours: the
/// bridge, when the builder asked for it.
#[cfg(feature = "metrics-bridge")]
fn metrics_bridge(guard: &OtelGuard) -> impl ThenInstall<BuildError> + use<> {
    guard.metrics_recorder()
}

/// Without the feature, nothing.
#[cfg(not(feature = "metrics-bridge"))]
fn metrics_bridge(_: &OtelGuard) -> impl ThenInstall<BuildError> + use<> {}

impl fmt::Debug for OtelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("OtelBuilder");
        f.field("role", &self.settings.role)
            .field("exporter", &self.exporter)
            .field("protocol", &self.protocol.protocol)
            .field("endpoint", &self.endpoint)
            .field("headers", &RedactedHeaders(&self.headers))
            .field("compression", &self.compression)
            .field("export_timeout", &self.export_timeout)
            .field("metric_export_timeout", &self.metric_export_timeout)
            .field("export_interval", &self.export_interval)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("temporality", &self.temporality)
            .field("histogram_aggregation", &self.histogram_aggregation)
            .field("boundaries", &self.settings.boundaries)
            .field("service_name", &self.settings.service_name)
            .field("resource_attributes", &self.settings.resource_attributes)
            .field("console_writer", &self.console_writer)
            .field("tls", &self.tls)
            .field("gym", &self.settings.gym)
            .field("process_metrics", &self.settings.process_metrics)
            .field("http_dup", &self.settings.http_dup)
            .field("exemplar_filter", &self.settings.exemplar_filter);
        #[cfg(feature = "metrics-bridge")]
        f.field("metrics_bridge", &self.settings.metrics_bridge);
        f.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> OtelBuilder {
        let map: HashMap<&str, String> = vars.iter().map(|(k, v)| (*k, v.to_string())).collect();
        OtelBuilder::from_env_lookup(|name| map.get(name).cloned()).unwrap()
    }

    #[test]
    fn http_dup_in_the_environment_turns_the_old_http_histogram_on() {
        assert!(
            from(&[("OTEL_SEMCONV_STABILITY_OPT_IN", "database,http/dup")])
                .settings
                .http_dup
        );
        assert!(
            !from(&[("OTEL_SEMCONV_STABILITY_OPT_IN", "http")])
                .settings
                .http_dup
        );
        assert!(!from(&[]).settings.http_dup);
    }

    #[test]
    fn nothing_set_gives_the_defaults() {
        let b = from(&[]);
        assert_eq!(b.settings.role, gym_metrics_api::Role::default_server());
        assert_eq!(b.exporter, MetricsExporter::Otlp);
        assert_eq!(b.protocol.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(b.export_interval, Duration::from_secs(10));
        assert_eq!(b.export_timeout, Duration::from_secs(10));
        assert_eq!(b.metric_export_timeout, Duration::from_secs(30));
        assert_eq!(b.shutdown_timeout, Duration::from_secs(5));
        assert_eq!(b.temporality, TemporalityPreference::Cumulative);
        assert_eq!(b.endpoint, None);
    }

    #[test]
    fn variables_reach_the_settings() {
        let b = from(&[
            ("OTEL_SERVICE_NAME", "lab"),
            ("OTEL_RESOURCE_ATTRIBUTES", "team=rl"),
            ("OTEL_METRICS_EXPORTER", "console"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=lab"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1500"),
            ("OTEL_METRIC_EXPORT_TIMEOUT", "2500"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "250"),
            ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
                "base2_exponential_bucket_histogram",
            ),
            ("GYM_METRICS_OTEL_SHUTDOWN_TIMEOUT", "700"),
        ]);
        assert_eq!(b.settings.service_name.as_deref(), Some("lab"));
        assert_eq!(
            b.settings.resource_attributes,
            [("team".into(), "rl".into())]
        );
        assert_eq!(b.exporter, MetricsExporter::Console);
        assert_eq!(b.protocol.protocol, OtlpProtocol::Grpc);
        assert!(matches!(b.endpoint, Some(CollectorUrl::Base { .. })));
        assert_eq!(b.headers, [("x-tenant".into(), "lab".into())]);
        assert_eq!(b.export_timeout, Duration::from_millis(1500));
        assert_eq!(b.metric_export_timeout, Duration::from_millis(2500));
        assert_eq!(b.export_interval, Duration::from_millis(250));
        assert_eq!(b.temporality, TemporalityPreference::Delta);
        assert_eq!(
            b.histogram_aggregation,
            HistogramAggregation::Base2Exponential
        );
        assert_eq!(b.shutdown_timeout, Duration::from_millis(700));
    }

    #[test]
    fn gym_selecting_otlp_without_a_protocol_speaks_grpc_to_localhost_4317() {
        let b = from(&[("NEMO_GYM_OTEL_ENABLED", "1")]);
        assert_eq!(b.exporter, MetricsExporter::Otlp);
        assert_eq!(b.protocol.protocol, OtlpProtocol::Grpc);
        assert_eq!(
            crate::settings::collector_url::resolve(b.endpoint.as_ref(), b.protocol.protocol)
                .unwrap(),
            "http://localhost:4317"
        );
        // Gym's Slurm executor sets the protocol: it wins.
        let b = from(&[
            ("NEMO_GYM_OTEL_ENABLED", "1"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ]);
        assert_eq!(b.protocol.protocol, OtlpProtocol::HttpProtobuf);
    }

    #[test]
    fn gyms_exporter_wins_over_otel_metrics_exporter() {
        let b = from(&[
            ("OTEL_METRICS_EXPORTER", "otlp"),
            ("NEMO_LENS_EXPORTER", "console"),
        ]);
        assert_eq!(b.exporter, MetricsExporter::Console);
    }

    #[test]
    fn a_bad_gym_value_is_a_start_up_error_naming_it() {
        let map: HashMap<&str, String> =
            [("NEMO_GYM_OTEL_EXPORTER", "prometheus".to_string())].into();
        let e = OtelBuilder::from_env_lookup(|name| map.get(name).cloned()).unwrap_err();
        assert_eq!(e.variable(), "NEMO_GYM_OTEL_EXPORTER");
        assert!(e.to_string().contains("prometheus") && e.to_string().contains("otlp or console"));
    }

    #[test]
    fn debug_prints_the_settings_but_not_the_secrets() {
        let b = OtelBuilder::new()
            .endpoint("http://gym:s3cret-pw@collector:4318/v1/metrics")
            .headers([("authorization", "Bearer s3cret-token")]);
        let printed = format!("{b:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert!(printed.contains("authorization"), "{printed}");
        assert!(printed.contains("collector:4318/v1/metrics"), "{printed}");
        assert!(printed.contains("export_interval"), "{printed}");
    }
}
