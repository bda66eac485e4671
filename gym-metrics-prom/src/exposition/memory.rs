//! NeMo Gym's memory gauges ([`Instrument::GYM_MEMORY`]) of an orchestrator
//! with Gym's memory profiling on: written at each scrape from the
//! profiler's latest sample ([`gym_metrics_kit::memory`]), under the names
//! OpenTelemetry's exporter gives Gym's instruments
//! (`gym_server_memory_usage_bytes`, `gym_server_processes`, ...) and Gym's
//! attributes as labels (`nemo_gym_server_name`, `process_pid`,
//! `memory_type`), so one query reads Gym's orchestrators and ours alike.
//! A gauge without a value (no server published yet) is left out.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use gym_metrics_api::backend::Instrument;
use gym_metrics_kit::memory::MemoryProfiler;
use gym_metrics_kit::naming::{prometheus_name, sample_names, sanitize_label_name};

use super::gym::SCOPE_LABELS;
use super::model::{Family, Kind, Value};
use super::{LaterFamilies, Out};

/// The memory families, read from `profiler` at each scrape.
#[derive(Debug)]
pub(crate) struct MemoryFamilies {
    profiler: Arc<MemoryProfiler>,
    /// One per gauge, in [`Instrument::GYM_MEMORY`]'s order.
    families: Vec<Family>,
}

impl MemoryFamilies {
    pub(crate) fn new(profiler: Arc<MemoryProfiler>) -> Arc<Self> {
        let families = Instrument::GYM_MEMORY
            .iter()
            .map(|instrument| Family {
                name: prometheus_name(instrument),
                help: Cow::Borrowed(instrument.description),
                kind: Kind::Gauge,
                labels: SCOPE_LABELS
                    .iter()
                    .map(|&(n, v)| (n.to_string(), v.to_string()))
                    .collect(),
                bounds: Vec::new(),
            })
            .collect();
        Arc::new(Self { profiler, families })
    }
}

impl LaterFamilies for MemoryFamilies {
    fn write(&self, out: &mut Out<'_>) {
        let sample = self.profiler.latest();
        let points = sample.points();
        for (instrument, family) in Instrument::GYM_MEMORY.iter().zip(&self.families) {
            let series: Vec<(Vec<(String, String)>, u64)> = points
                .iter()
                .filter(|p| p.instrument == instrument)
                .map(|p| {
                    let labels = p.attributes().into_iter();
                    let labels = labels.map(|(k, v)| (sanitize_label_name(k), v)).collect();
                    (labels, p.value)
                })
                .collect();
            if series.is_empty() {
                continue;
            }
            out.family(
                family,
                series.iter().map(|(labels, value)| {
                    let labels = labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
                    (labels, Value::Count(*value))
                }),
            );
        }
    }

    fn taken_names(&self) -> HashSet<String> {
        (self.families.iter())
            .flat_map(|f| sample_names(&f.name, f.kind.instrument_kind()))
            .collect()
    }
}
