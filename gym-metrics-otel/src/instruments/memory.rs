//! NeMo Gym's memory gauges ([`Instrument::GYM_MEMORY`]) of an orchestrator
//! with Gym's memory profiling on: asynchronous gauges on the `gym-metrics`
//! meter, under Gym's names, units and attributes, whose callbacks read the
//! profiler's latest sample ([`gym_metrics_kit::memory`]) at each
//! collection; `process.pid` is an integer, as Gym records it.

use std::sync::Arc;

use opentelemetry::metrics::Meter;
use opentelemetry::KeyValue;

use gym_metrics_api::backend::Instrument;
use gym_metrics_kit::memory::{MemoryPoint, MemoryProfiler, PID_ATTRIBUTE};

/// Registers one gauge per [`Instrument::GYM_MEMORY`] entry on `meter`,
/// observing `profiler`'s latest sample. The SDK keeps the callbacks (and
/// with them the profiler) for the meter's life.
pub(crate) fn register(meter: &Meter, profiler: &Arc<MemoryProfiler>) {
    for instrument in &Instrument::GYM_MEMORY {
        let profiler = Arc::clone(profiler);
        meter
            .u64_observable_gauge(instrument.name)
            .with_unit(instrument.unit.unwrap_or_default())
            .with_description(instrument.description)
            .with_callback(move |observer| {
                let sample = profiler.latest();
                for point in sample.points() {
                    if point.instrument == instrument {
                        observer.observe(point.value, &attributes(&point));
                    }
                }
            })
            .build();
    }
}

/// The point's attributes, `process.pid` as the integer it is.
fn attributes(point: &MemoryPoint<'_>) -> Vec<KeyValue> {
    let pid = point.server.map(|s| i64::from(s.pid));
    (point.attributes().into_iter())
        .map(|(key, value)| match pid {
            Some(pid) if key == PID_ATTRIBUTE => KeyValue::new(key, pid),
            _ => KeyValue::new(key, value),
        })
        .collect()
}
