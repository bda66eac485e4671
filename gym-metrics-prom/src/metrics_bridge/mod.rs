//! The `metrics` crate bridged into the Prometheus exposition (feature
//! `metrics-bridge`): the kit's bridge ([`gym_metrics_kit::bridge`]: names,
//! series, cardinality limit, bucket rules, recorder) over this storage,
//! whose series are atomics a handle records into with no lookup (a counter
//! is one `AtomicU64`, a gauge one holding `f64` bits, a histogram one per
//! bucket and one for the sum), written after the gym families by
//! `render.rs` through the exposition's one writer. Labels are translated by OpenTelemetry's Prometheus rules
//! (`naming.rs`); the names that translate to one family share its series.

mod naming;
mod render;
mod series;

use std::sync::Arc;

use gym_metrics_api::backend::InstrumentKind;
use gym_metrics_kit::bridge::{
    CounterCell, GaugeCell, HistogramCell, InstrumentSpec, Instruments, Labels,
    MetricsBridgeOptions, Series, SeriesLabels, Storage,
};

pub use gym_metrics_kit::bridge::MetricsBridgeStats;
use series::HistogramSeries;

use crate::exposition::gym::GymFamilies;
use crate::exposition::Exposition;
use gym_metrics_kit::recording::{Layout, NativeConfig};

/// The `metrics` crate bridged into this backend's exposition: `counter!`,
/// `gauge!` and `histogram!` from the application and from its dependencies
/// appear after the gym families on the same `/metrics`, labelled
/// `otel_scope_name="metrics"`. Installed by [`crate::PrometheusBuilder::install`]
/// (and `install_recorder`) when the builder was given
/// [`crate::PrometheusBuilder::with_metrics_bridge`]; from `build`, take it
/// from [`crate::PrometheusHandle::metrics_recorder`] and install it yourself
/// (or use it locally, as here). `stats()` says what was refused or folded.
///
/// ```
/// use gym_metrics_prom::MetricsBridgeOptions;
/// let (_r, handle) = gym_metrics_prom::PrometheusBuilder::new()
///     .with_metrics_bridge(MetricsBridgeOptions::new())
///     .build()?;
/// let bridge = handle.metrics_recorder().expect("asked for");
/// metrics::with_local_recorder(&bridge, || {
///     metrics::describe_counter!("jobs.done", "Jobs finished");
///     metrics::counter!("jobs.done", "queue" => "fast").increment(2);
///     metrics::gauge!("target_info").set(1.0);
/// });
/// let text = handle.render();
/// assert!(text.contains("# HELP jobs_done_total Jobs finished\n"));
/// assert!(text.contains("jobs_done_total{queue=\"fast\",otel_scope_name=\"metrics\"} 2\n"));
/// assert_eq!(bridge.stats().refused, 1); // our family's name
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
pub type MetricsBridgeRecorder = gym_metrics_kit::bridge::MetricsBridgeRecorder<PromStorage>;

/// The bridge's storage: families written by this backend's exposition,
/// each histogram with its native buckets laid out alike.
#[derive(Debug)]
pub struct PromStorage {
    native: Arc<Layout>,
}

/// One bridged family: what its `# HELP` says and a histogram's bounds.
#[derive(Debug)]
pub struct Family {
    pub(crate) help: String,
    pub(crate) bounds: Vec<f64>,
}

impl Storage for PromStorage {
    type Instrument = Family;
    type Counter = CounterCell;
    type Gauge = GaugeCell;
    type Histogram = HistogramSeries;
    const LOG_TARGET: &'static str = module_path!();
    const ONE_INSTRUMENT_PER_FAMILY: bool = true;

    fn labels<'a>(
        &self,
        labels: impl Iterator<Item = (&'a str, &'a str)>,
        kind: InstrumentKind,
    ) -> Labels {
        naming::series_labels(labels, kind)
    }

    fn instrument(&self, spec: &InstrumentSpec<'_>) -> Family {
        Family {
            help: spec.help.to_string(),
            bounds: spec.bounds.to_vec(),
        }
    }

    fn series(&self, family: &Family, kind: InstrumentKind, _: SeriesLabels<'_>) -> Series<Self> {
        match kind {
            InstrumentKind::Counter => Series::Counter(Arc::new(CounterCell::new(()))),
            InstrumentKind::Gauge => Series::Gauge(Arc::new(GaugeCell::new(()))),
            InstrumentKind::Histogram => Series::Histogram(Arc::new(HistogramCell::new(
                HistogramSeries::new(&family.bounds, Arc::clone(&self.native)),
            ))),
        }
    }

    /// The description becomes the family's HELP unless it has one already.
    fn described_late(&self, family: &mut Family, _name: &str, help: &str) {
        if family.help.is_empty() {
            family.help = help.to_string();
        }
    }
}

/// `exposition` with a bridge configured by `options` written after the
/// gym families, and the bridge's recorder. Besides the whole fleet's gym
/// families ([`gym_metrics_kit::bridge::FamilyNames`]), this process's
/// others (process metrics, when on) are taken too.
pub(crate) fn attach(
    options: MetricsBridgeOptions,
    native: NativeConfig,
    families: &GymFamilies,
    exposition: Exposition,
) -> (Exposition, MetricsBridgeRecorder) {
    let ours = families
        .iter()
        .map(|f| (f.family.name.as_str(), f.family.kind.instrument_kind()));
    let storage = PromStorage {
        native: Arc::new(Layout::any(native)),
    };
    let registry = Arc::new(Instruments::new(options, storage, ours));
    let recorder = MetricsBridgeRecorder::new(Arc::clone(&registry));
    (exposition.with_later(registry), recorder)
}

/// The install's bridge step, refused: another `metrics` recorder is set.
impl From<gym_metrics_kit::bridge::MetricsRecorderTaken> for crate::BuildError {
    fn from(_: gym_metrics_kit::bridge::MetricsRecorderTaken) -> Self {
        Self::MetricsRecorderTaken
    }
}
