//! The [`Recorder`] implementation: catalogue instruments on an SDK meter.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use gym_metrics_api::backend::{Boundaries, Instrument, Recorder, SpanGroups};
use gym_metrics_api::{HttpServerRequest, Role};
use gym_metrics_kit::memory::MemoryProfiler;
use gym_metrics_kit::VerifyTally;
use gym_metrics_kit::SCOPE_NAME;
use gym_metrics_kit::SCOPE_VERSION;
use opentelemetry::metrics::{Gauge, Histogram, Meter, MeterProvider as _};
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::SdkMeterProvider;

use crate::http_attributes::{http_attributes, http_old_attributes};

/// Records the catalogue's instruments into an OpenTelemetry SDK meter.
///
/// Recording only aggregates in memory (never blocks on export): the two
/// histograms are SDK histograms, the verify counters and the success rate
/// are read from a [`VerifyTally`] at collection time, so the exported rate
/// is always the latest fraction and the counters agree with it.
/// `gym.servers.active` exists only for the orchestrator role.
/// `http.server.request.duration` (seconds, the semantic conventions'
/// advised boundaries whatever the builder's) is dimensioned by method,
/// route, status, scheme and error type.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use gym_metrics_api::backend::Recorder;
/// use gym_metrics_api::Role;
/// use gym_metrics_otel::{MetricsExporter, OtelBuilder};
/// # #[derive(Clone, Default)]
/// # struct Shared(Arc<Mutex<Vec<u8>>>);
/// # impl std::io::Write for Shared {
/// #     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().write(b) }
/// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
/// # }
/// let console = Shared::default(); // a writer whose bytes the test can read
/// let (recorder, guard) = OtelBuilder::new()
///     .role(Role::orchestrator())
///     .exporter(MetricsExporter::Console)
///     .console_writer(console.clone())
///     .build()?;
/// recorder.record_verify_ms(40.0, true);
/// recorder.record_active_servers(4);
/// guard.shutdown()?; // the final export
/// let exported = String::from_utf8(console.0.lock().unwrap().clone())?;
/// assert!(exported.contains("gym.servers.active")); // the orchestrator has the gauge
/// assert!(exported.contains("gym.verify.success_rate"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OtelRecorder {
    role: Role,
    tally: Arc<VerifyTally>,
    rollout: Histogram<f64>,
    verify: Histogram<f64>,
    servers_active: Option<Gauge<u64>>,
    http_server: Histogram<f64>,
    /// The old `http.server.duration` (ms), when `http/dup` asks for it.
    http_server_old: Option<Histogram<f64>>,
    span_groups: SpanGroups,
    /// Gym's memory profiling: only for an orchestrator with it on.
    memory: Option<Arc<MemoryProfiler>>,
}

impl OtelRecorder {
    /// Creates the instruments on `provider`'s `gym-metrics` meter; the old
    /// HTTP histogram too when `http_old`.
    pub(crate) fn new(
        provider: &SdkMeterProvider,
        role: Role,
        boundaries: &Boundaries,
        http_old: bool,
    ) -> Self {
        let meter = gym_meter(provider);
        let tally = Arc::new(VerifyTally::new());
        register_tally_instruments(&meter, &tally);
        let servers_active = role.writes_fleet_size().then(|| {
            let i = Instrument::SERVERS_ACTIVE;
            meter
                .u64_gauge(i.name)
                .with_description(i.description)
                .build()
        });
        let http = Instrument::HTTP_SERVER_REQUEST_DURATION;
        let http_server = meter
            .f64_histogram(http.name)
            .with_unit(http.unit.unwrap_or_default())
            .with_description(http.description)
            .with_boundaries(Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S.to_vec())
            .build();
        let http_server_old = http_old.then(|| {
            let old = Instrument::HTTP_SERVER_DURATION_OLD;
            meter
                .f64_histogram(old.name)
                .with_unit(old.unit.unwrap_or_default())
                .with_description(old.description)
                .with_boundaries(Instrument::HTTP_SERVER_DURATION_OLD_BOUNDARIES_MS.to_vec())
                .build()
        });
        Self {
            http_server,
            http_server_old,
            rollout: histogram(&meter, Instrument::ROLLOUT_DURATION, boundaries),
            verify: histogram(&meter, Instrument::VERIFY_DURATION, boundaries),
            servers_active,
            tally,
            role,
            span_groups: SpanGroups::ALL,
            memory: None,
        }
    }

    /// The same recorder with Gym's memory profiling every `interval`, if
    /// any (`GymEnv::memory_profiling` decides for the role), and its gauges
    /// on `provider`.
    pub(crate) fn with_memory_profiling(
        mut self,
        provider: &SdkMeterProvider,
        interval: Option<Duration>,
    ) -> Self {
        if let Some(interval) = interval {
            let profiler = Arc::new(MemoryProfiler::start(interval));
            crate::memory_instruments::register(&gym_meter(provider), &profiler);
            self.memory = Some(profiler);
        }
        self
    }

    /// Gym's memory profiler, when this recorder has one.
    pub(crate) fn memory_profiler(&self) -> Option<Arc<MemoryProfiler>> {
        self.memory.clone()
    }

    /// The same recorder, declaring `groups` (NeMo Gym's `…_SPAN_GROUPS`)
    /// to the facade's gate at install.
    pub(crate) fn with_span_groups(mut self, groups: SpanGroups) -> Self {
        self.span_groups = groups;
        self
    }
}

/// `provider`'s `gym-metrics` meter (our scope and version), on which every
/// instrument of ours lives.
pub(crate) fn gym_meter(provider: &SdkMeterProvider) -> Meter {
    let scope = InstrumentationScope::builder(SCOPE_NAME)
        .with_version(SCOPE_VERSION)
        .build();
    provider.meter_with_scope(scope)
}

fn histogram(
    meter: &Meter,
    instrument: gym_metrics_api::backend::Instrument,
    boundaries: &Boundaries,
) -> Histogram<f64> {
    meter
        .f64_histogram(instrument.name)
        .with_unit(instrument.unit.unwrap_or_default())
        .with_description(instrument.description)
        .with_boundaries(boundaries.as_slice().to_vec())
        .build()
}

/// The success-rate gauge and the two verify counters, observed from the
/// tally when the SDK collects. The SDK keeps the callbacks for the meter's
/// life, so the instrument handles need not be kept.
fn register_tally_instruments(meter: &Meter, tally: &Arc<VerifyTally>) {
    let rate = Instrument::VERIFY_SUCCESS_RATE;
    let t = Arc::clone(tally);
    meter
        .f64_observable_gauge(rate.name)
        .with_description(rate.description)
        .with_callback(move |observer| {
            if let Some(r) = t.snapshot().success_rate() {
                observer.observe(r, &[]);
            }
        })
        .build();
    let completed = Instrument::VERIFY_COMPLETED;
    let t = Arc::clone(tally);
    meter
        .u64_observable_counter(completed.name)
        .with_description(completed.description)
        .with_callback(move |observer| observer.observe(t.snapshot().completed, &[]))
        .build();
    let succeeded = Instrument::VERIFY_SUCCEEDED;
    let t = Arc::clone(tally);
    meter
        .u64_observable_counter(succeeded.name)
        .with_description(succeeded.description)
        .with_callback(move |observer| observer.observe(t.snapshot().succeeded, &[]))
        .build();
}

impl Recorder for OtelRecorder {
    fn role(&self) -> &Role {
        &self.role
    }

    fn span_groups(&self) -> SpanGroups {
        self.span_groups
    }

    // Dropped as the facade drops them: NaN, negatives, and anything above
    // `Instrument::MAX_DURATION_MS` (584 years; `1e308`, `f64::MAX`). The
    // SDK's histogram sum does not saturate, so `f64::MAX` twice straight
    // into this recorder would make it +Inf; each record adds at most 1.8e13
    // here, as on the Prometheus wire. (The `Duration` methods' defaults drop
    // past `Instrument::MAX_DURATION` before converting.)
    #[inline]
    fn record_rollout_duration_ms(&self, duration_ms: f64) {
        if usable(duration_ms) {
            self.rollout.record(duration_ms, &[]);
        }
    }

    #[inline]
    fn record_verify_ms(&self, duration_ms: f64, succeeded: bool) {
        if usable(duration_ms) {
            self.verify.record(duration_ms, &[]);
            self.tally.record(succeeded);
        }
    }

    #[inline]
    fn record_active_servers(&self, count: u64) {
        if let Some(g) = &self.servers_active {
            g.record(count, &[]);
        }
    }

    #[inline]
    fn record_http_server_request(&self, request: &HttpServerRequest) {
        self.http_server
            .record(request.duration_s(), &http_attributes(request));
        if let Some(old) = &self.http_server_old {
            old.record(request.duration_s() * 1000.0, &http_old_attributes(request));
        }
    }

    fn publish_processes(&self, servers: &[(Role, u32)]) {
        if let Some(memory) = &self.memory {
            memory.set_servers(servers);
        }
    }
}

/// Whether the facade takes `duration_ms`: from 0 to
/// [`Instrument::MAX_DURATION_MS`] (NaN is not).
#[inline(always)]
fn usable(duration_ms: f64) -> bool {
    (0.0..=Instrument::MAX_DURATION_MS).contains(&duration_ms)
}

impl fmt::Debug for OtelRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtelRecorder")
            .field("role", &self.role)
            .field("tally", &self.tally)
            .finish_non_exhaustive()
    }
}
