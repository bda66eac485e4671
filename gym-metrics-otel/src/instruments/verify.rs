//! The verify counters and the success rate as SDK observable instruments,
//! read from the recording core's verify histogram when the SDK collects:
//! one pass gives all three, so the exported rate is always the latest
//! fraction and the counters agree with it and with the histogram. They
//! stay the SDK's for its temporality rules (an observable counter is
//! cumulative under `lowmemory`), and so each export has a collection of
//! the SDK's to join: the reader skips an export with none.

use std::sync::Arc;

use gym_metrics_api::backend::Instrument;
use gym_metrics_kit::recording::GymMetrics;
use opentelemetry::metrics::Meter;

/// Registers the success-rate gauge and the two verify counters on `meter`.
/// The SDK keeps the callbacks for the meter's life, so the instrument
/// handles need not be kept.
pub(crate) fn register(meter: &Meter, metrics: &Arc<GymMetrics>) {
    let rate = Instrument::VERIFY_SUCCESS_RATE;
    let m = Arc::clone(metrics);
    meter
        .f64_observable_gauge(rate.name)
        .with_description(rate.description)
        .with_callback(move |observer| {
            if let Some(rate) = m.verify_duration.snapshot().success_rate() {
                observer.observe(rate, &[]);
            }
        })
        .build();
    let completed = Instrument::VERIFY_COMPLETED;
    let m = Arc::clone(metrics);
    meter
        .u64_observable_counter(completed.name)
        .with_description(completed.description)
        .with_callback(move |observer| observer.observe(m.verify_duration.snapshot().count(), &[]))
        .build();
    let succeeded = Instrument::VERIFY_SUCCEEDED;
    let m = Arc::clone(metrics);
    meter
        .u64_observable_counter(succeeded.name)
        .with_description(succeeded.description)
        .with_callback(move |observer| {
            observer.observe(m.verify_duration.snapshot().successes, &[])
        })
        .build();
}
