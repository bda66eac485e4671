//! The builder: every setting of the backend, each also an `OTEL_*` variable
//! (see [`OtelBuilder::from_env`]).

use std::io::Write;
use std::time::Duration;

use gym_metrics_api::{Boundaries, BoundariesError, Role};

use crate::console_writer::ConsoleWriter;
use crate::endpoint::Endpoint;
use crate::{HistogramAggregation, MetricsExporter, OtlpProtocol, TemporalityPreference};

/// Default `OTEL_METRIC_EXPORT_INTERVAL`: 10 s.
pub(crate) const DEFAULT_EXPORT_INTERVAL: Duration = Duration::from_secs(10);
/// Default `OTEL_EXPORTER_OTLP_TIMEOUT`: 10 s.
pub(crate) const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default deadline of [`crate::OtelGuard::shutdown`]: 5 s.
pub(crate) const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Configures and starts the OpenTelemetry backend.
///
/// Defaults: OTLP over http/protobuf to `http://localhost:4318/v1/metrics`,
/// export every 10 s, cumulative temporality, the catalogue's bucket
/// boundaries, a 5 s shutdown deadline, and the role `server("server", "server")`.
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
/// // `builder.install()?` would start exporting and return the guard.
/// # let _ = builder;
/// # Ok::<(), gym_metrics_api::BoundariesError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OtelBuilder {
    pub(crate) role: Role,
    pub(crate) exporter: MetricsExporter,
    pub(crate) protocol: OtlpProtocol,
    pub(crate) endpoint: Option<Endpoint>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) export_timeout: Duration,
    pub(crate) export_interval: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) temporality: TemporalityPreference,
    pub(crate) histogram_aggregation: HistogramAggregation,
    pub(crate) boundaries: Boundaries,
    pub(crate) service_name: Option<String>,
    pub(crate) resource_attributes: Vec<(String, String)>,
    pub(crate) console_writer: Option<ConsoleWriter>,
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
    /// let b = gym_metrics_otel::OtelBuilder::new();
    /// # let _ = b;
    /// ```
    pub fn new() -> Self {
        Self {
            role: Role::server("server", "server"),
            exporter: MetricsExporter::default(),
            protocol: OtlpProtocol::default(),
            endpoint: None,
            headers: Vec::new(),
            export_timeout: DEFAULT_EXPORT_TIMEOUT,
            export_interval: DEFAULT_EXPORT_INTERVAL,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            temporality: TemporalityPreference::default(),
            histogram_aggregation: HistogramAggregation::default(),
            boundaries: Boundaries::default_duration_ms(),
            service_name: None,
            resource_attributes: Vec::new(),
            console_writer: None,
        }
    }

    /// The role this process declares (orchestrator or server).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().role(gym_metrics_api::Role::orchestrator());
    /// # let _ = b;
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// OTLP, console, or none (`OTEL_METRICS_EXPORTER`).
    ///
    /// ```
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// let b = OtelBuilder::new().exporter(MetricsExporter::Console);
    /// # let _ = b;
    /// ```
    pub fn exporter(mut self, exporter: MetricsExporter) -> Self {
        self.exporter = exporter;
        self
    }

    /// http/protobuf or gRPC (`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`).
    ///
    /// ```
    /// use gym_metrics_otel::{OtelBuilder, OtlpProtocol};
    /// let b = OtelBuilder::new().protocol(OtlpProtocol::Grpc);
    /// # let _ = b;
    /// ```
    pub fn protocol(mut self, protocol: OtlpProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// The collector URL, used as is (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`):
    /// the full path for http/protobuf (`http://host:4318/v1/metrics`), the
    /// host and port for gRPC (`http://host:4317`). Only `http://` URLs:
    /// anything else is rejected by [`OtelBuilder::install`].
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().endpoint("http://127.0.0.1:4318/v1/metrics");
    /// # let _ = b;
    /// ```
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(Endpoint::Exact {
            source: "endpoint",
            url: url.into(),
        });
        self
    }

    /// Headers sent with every export, e.g. for authentication
    /// (`OTEL_EXPORTER_OTLP_METRICS_HEADERS`). Replaces earlier headers.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().headers([("x-tenant", "lab")]);
    /// # let _ = b;
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

    /// How long one export may take, retries included
    /// (`OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`, default 10 s).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().export_timeout(std::time::Duration::from_secs(2));
    /// # let _ = b;
    /// ```
    pub fn export_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.export_timeout = timeout;
        self
    }

    /// Time between exports (`OTEL_METRIC_EXPORT_INTERVAL`, default 10 s).
    /// Zero is rejected by [`OtelBuilder::install`].
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().export_interval(std::time::Duration::from_millis(500));
    /// # let _ = b;
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
    /// # let _ = b;
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
        self.boundaries = Boundaries::new(bounds)?;
        Ok(self)
    }

    /// Cumulative (default), delta or low-memory temporality
    /// (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
    ///
    /// ```
    /// use gym_metrics_otel::{OtelBuilder, TemporalityPreference};
    /// let b = OtelBuilder::new().temporality(TemporalityPreference::Delta);
    /// # let _ = b;
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
    /// # let _ = b;
    /// ```
    pub fn histogram_aggregation(mut self, aggregation: HistogramAggregation) -> Self {
        self.histogram_aggregation = aggregation;
        self
    }

    /// The base of `service.name` (`OTEL_SERVICE_NAME`, default `gym`);
    /// the exported name is `<base>/<role name>`.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().service_name("lab");
    /// # let _ = b;
    /// ```
    pub fn service_name(mut self, base: impl Into<String>) -> Self {
        self.service_name = Some(base.into());
        self
    }

    /// Extra resource attributes (`OTEL_RESOURCE_ATTRIBUTES`), added to the
    /// earlier ones. `service.name`, `service.instance.id` and the `gym.*`
    /// role attributes are always the backend's own.
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().resource_attributes([("deployment.environment", "dev")]);
    /// # let _ = b;
    /// ```
    pub fn resource_attributes<K: Into<String>, V: Into<String>>(
        mut self,
        attributes: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.resource_attributes
            .extend(attributes.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Where the console exporter writes its JSON lines (default: standard output).
    ///
    /// ```
    /// let b = gym_metrics_otel::OtelBuilder::new().console_writer(std::io::stderr());
    /// # let _ = b;
    /// ```
    pub fn console_writer(mut self, writer: impl Write + Send + 'static) -> Self {
        self.console_writer = Some(ConsoleWriter::new(writer));
        self
    }
}
