//! Turning an [`OtelBuilder`] into a running pipeline: exporter, periodic
//! reader, meter provider, recorder and guard.

use std::collections::HashMap;
use std::str::FromStr;

use gym_metrics_api::backend::catalogue;
use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry_otlp::tonic_types::metadata::MetadataMap;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{
    Instrument, MeterProviderBuilder, PeriodicReader, SdkMeterProvider, Stream,
};

use crate::console_exporter::ConsoleExporter;
use crate::console_writer::ConsoleWriter;
use crate::export_log::LoggedExporter;
use crate::grpc_runtime::{GrpcRuntime, OnRuntime};
use crate::resource::build_resource;
use crate::{
    endpoint, BuildError, ConfigError, MetricsExporter, OtelBuilder, OtelGuard, OtelRecorder,
    OtlpProtocol,
};
use gym_metrics_api::backend::resource::new_instance_id;

impl OtelBuilder {
    /// Starts the pipeline without touching the process-wide facade: the
    /// recorder is yours to call (or to install). With exporter `none` the
    /// recorder aggregates and nothing is exported.
    ///
    /// # Errors
    /// An invalid setting (zero interval, a non-`http://` endpoint, a bad
    /// header), an exporter that could not be built, or
    /// [`BuildError::CompiledOff`] in a program built with the API's `off` feature.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use gym_metrics_api::backend::Recorder;
    /// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
    /// # #[derive(Clone, Default)]
    /// # struct Shared(Arc<Mutex<Vec<u8>>>);
    /// # impl std::io::Write for Shared {
    /// #     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().write(b) }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// let console = Shared::default(); // a writer whose bytes the test can read
    /// let (recorder, guard) = OtelBuilder::new().exporter(MetricsExporter::Console)
    ///     .console_writer(console.clone())
    ///     .build()?;
    /// recorder.record_rollout_duration_ms(1200.0);
    /// guard.shutdown()?; // the final export
    /// let exported = String::from_utf8(console.0.lock().unwrap().clone())?;
    /// assert!(exported.contains("gym.rollout.duration_ms"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> Result<(OtelRecorder, OtelGuard), BuildError> {
        gym_metrics_api::backend::check_recording_compiled_in()?;
        if self.export_interval.is_zero() {
            return Err(
                ConfigError::invalid("export_interval", "0ms", "a positive duration").into(),
            );
        }
        if self.export_timeout.is_zero() {
            return Err(
                ConfigError::invalid("export_timeout", "0ms", "a positive duration").into(),
            );
        }
        // A `service.instance.id` the user gave (e.g. a pod name) is kept, as
        // gym-metrics-prom does; otherwise each process gets a fresh one.
        let instance_id = self
            .resource_attributes
            .iter()
            .find(|(key, _)| key == "service.instance.id")
            .map(|(_, id)| id.clone())
            .unwrap_or_else(new_instance_id);
        let resource = build_resource(
            &self.role,
            self.service_name.as_deref(),
            &self.resource_attributes,
            instance_id,
        );
        let mut provider = SdkMeterProvider::builder().with_resource(resource);
        if let Some(aggregation) = self.histogram_aggregation.sdk_override() {
            provider = provider.with_view(move |i: &Instrument| {
                let ours = [
                    catalogue::ROLLOUT_DURATION.name,
                    catalogue::VERIFY_DURATION.name,
                ];
                if !ours.contains(&i.name()) {
                    return None;
                }
                Stream::builder()
                    .with_aggregation(aggregation.clone())
                    .build()
                    .ok()
            });
        }
        let provider = self.add_reader(provider)?.build();
        let recorder = OtelRecorder::new(&provider, self.role, &self.boundaries);
        Ok((
            recorder,
            OtelGuard::new(Some(provider), self.shutdown_timeout),
        ))
    }

    /// Starts the pipeline and installs its recorder into the facade
    /// (`gym_metrics_api::install`). With exporter `none` nothing is
    /// started or installed: the facade stays free and every record call
    /// stays one atomic load and a branch.
    ///
    /// # Errors
    /// As [`OtelBuilder::build`], and [`BuildError::AlreadyInstalled`] when a
    /// recorder is already installed in this process.
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
        gym_metrics_api::backend::check_recording_compiled_in()?;
        if self.exporter == MetricsExporter::None {
            return Ok(OtelGuard::new(None, self.shutdown_timeout));
        }
        if gym_metrics_api::role().is_some() {
            return Err(BuildError::AlreadyInstalled);
        }
        let (recorder, guard) = self.build()?;
        match gym_metrics_api::install(recorder) {
            Ok(installation) => Ok(guard.with_installation(installation)),
            Err(_) => Err(BuildError::AlreadyInstalled),
        }
    }

    fn add_reader(
        &self,
        provider: MeterProviderBuilder,
    ) -> Result<MeterProviderBuilder, BuildError> {
        let temporality = self.temporality.sdk();
        Ok(match (self.exporter, self.protocol) {
            (MetricsExporter::None, _) => provider,
            (MetricsExporter::Console, _) => {
                let writer = self
                    .console_writer
                    .clone()
                    .unwrap_or_else(ConsoleWriter::stdout);
                let exporter = ConsoleExporter::new(writer, temporality);
                provider.with_reader(self.reader(exporter, "the console".into()))
            }
            (MetricsExporter::Otlp, OtlpProtocol::HttpProtobuf) => {
                let url = endpoint::resolve(self.endpoint.as_ref(), self.protocol)?;
                let headers: HashMap<String, String> = self
                    .header_map()?
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((k.as_str().to_string(), v.to_str().ok()?.to_string()))
                    })
                    .collect();
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(url.clone())
                    .with_timeout(self.export_timeout)
                    .with_headers(headers)
                    .with_temporality(temporality)
                    .build()?;
                provider.with_reader(self.reader(exporter, url))
            }
            (MetricsExporter::Otlp, OtlpProtocol::Grpc) => {
                let url = endpoint::resolve(self.endpoint.as_ref(), self.protocol)?;
                let metadata = MetadataMap::from_headers(self.header_map()?);
                let runtime = GrpcRuntime::start().map_err(BuildError::Runtime)?;
                let exporter = {
                    // tonic's lazy channel spawns its worker on the current runtime.
                    let _entered = runtime.handle().enter();
                    opentelemetry_otlp::MetricExporter::builder()
                        .with_tonic()
                        .with_protocol(Protocol::Grpc)
                        .with_endpoint(url.clone())
                        .with_timeout(self.export_timeout)
                        .with_metadata(metadata)
                        .with_temporality(temporality)
                        .build()?
                };
                provider.with_reader(self.reader(OnRuntime::new(exporter, runtime), url))
            }
        })
    }

    fn reader<E: PushMetricExporter>(
        &self,
        exporter: E,
        destination: String,
    ) -> PeriodicReader<LoggedExporter<E>> {
        PeriodicReader::builder(LoggedExporter::new(exporter, destination))
            .with_interval(self.export_interval)
            .build()
    }

    /// The headers, validated as HTTP header names and values.
    fn header_map(&self) -> Result<HeaderMap, ConfigError> {
        let mut map = HeaderMap::new();
        for (k, v) in &self.headers {
            let invalid = || {
                ConfigError::invalid(
                    "headers (OTEL_EXPORTER_OTLP_[METRICS_]HEADERS)",
                    format!("{k}={v}"),
                    "header names of letters, digits and dashes, and values of visible ASCII",
                )
            };
            let name = HeaderName::from_str(k).map_err(|_| invalid())?;
            let value = HeaderValue::from_str(v).map_err(|_| invalid())?;
            map.insert(name, value);
        }
        Ok(map)
    }
}
