//! The verify counters and the success rate as SDK observable instruments,
//! all three, and the verify histogram the export encodes beside them, from
//! one reading of the recording core's verify histogram per export: the
//! exported rate is always the latest fraction, and the counters agree with
//! it and with the histogram. They stay the SDK's for its temporality rules
//! (an observable counter is cumulative under `lowmemory`), and so each
//! export has a collection of the SDK's to join: the reader skips an export
//! with none (the counters observe 0 from the start).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use gym_metrics_api::backend::Instrument;
use gym_metrics_kit::recording::{GymMetrics, HistogramSnapshot};
use opentelemetry::metrics::Meter;

/// How long one reading serves: the callbacks of one collection and the
/// encoding right after it take microseconds, and exports are at least
/// 50 ms apart, so a reading never serves two exports.
const ONE_EXPORT: Duration = Duration::from_millis(20);

/// The verify histogram's reading of the current export.
#[derive(Debug)]
pub(crate) struct VerifyReading {
    metrics: Arc<GymMetrics>,
    latest: Mutex<Option<(Instant, HistogramSnapshot)>>,
}

impl VerifyReading {
    /// The reading of `metrics`' verify histogram, taken when first asked for.
    pub(crate) fn new(metrics: Arc<GymMetrics>) -> Self {
        Self {
            metrics,
            latest: Mutex::new(None),
        }
    }

    /// This collection's reading: the one an earlier callback of the same
    /// collection took (within [`ONE_EXPORT`]), or one taken now.
    pub(crate) fn read(&self) -> HistogramSnapshot {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        match &*latest {
            Some((at, reading)) if at.elapsed() < ONE_EXPORT => reading.clone(),
            _ => {
                let reading = self.metrics.verify_duration.snapshot();
                *latest = Some((Instant::now(), reading.clone()));
                reading
            }
        }
    }

    /// The reading the collection just before this export took, for the
    /// export's own histogram, and done with: the next collection reads
    /// afresh (a final export right after a periodic one misses nothing).
    pub(crate) fn take(&self) -> HistogramSnapshot {
        let taken = (self.latest.lock().unwrap_or_else(PoisonError::into_inner)).take();
        match taken {
            Some((at, reading)) if at.elapsed() < ONE_EXPORT => reading,
            _ => self.metrics.verify_duration.snapshot(),
        }
    }
}

/// Registers the success-rate gauge and the two verify counters on `meter`,
/// observed from `reading`. The SDK keeps the callbacks for the meter's
/// life, so the instrument handles need not be kept.
pub(crate) fn register(meter: &Meter, reading: &Arc<VerifyReading>) {
    let rate = Instrument::VERIFY_SUCCESS_RATE;
    let r = Arc::clone(reading);
    meter
        .f64_observable_gauge(rate.name)
        .with_description(rate.description)
        .with_callback(move |observer| {
            if let Some(rate) = r.read().success_rate() {
                observer.observe(rate, &[]);
            }
        })
        .build();
    let completed = Instrument::VERIFY_COMPLETED;
    let r = Arc::clone(reading);
    meter
        .u64_observable_counter(completed.name)
        .with_description(completed.description)
        .with_callback(move |observer| observer.observe(r.read().count(), &[]))
        .build();
    let succeeded = Instrument::VERIFY_SUCCEEDED;
    let r = Arc::clone(reading);
    meter
        .u64_observable_counter(succeeded.name)
        .with_description(succeeded.description)
        .with_callback(move |observer| observer.observe(r.read().successes, &[]))
        .build();
}

#[cfg(test)]
mod tests {
    use gym_metrics_api::backend::Boundaries;
    use gym_metrics_api::Role;
    use gym_metrics_kit::recording::NativeConfig;

    use super::*;

    #[test]
    fn one_reading_serves_one_collection_and_its_export_and_the_next_reads_afresh() {
        let m = GymMetrics::new(
            Role::default_server(),
            Boundaries::default(),
            NativeConfig::default(),
        );
        let m = Arc::new(m);
        let reading = VerifyReading::new(Arc::clone(&m));
        m.verify_duration.record_outcome(5.0, true);
        assert_eq!(reading.read().count(), 1);
        // A record between two callbacks of one collection: not seen, so
        // the counters, the rate and the histogram agree.
        m.verify_duration.record_outcome(5.0, false);
        assert_eq!((reading.read().count(), reading.read().successes), (1, 1));
        // The export takes it; the next collection reads afresh.
        assert_eq!(reading.take().count(), 1);
        assert_eq!(reading.read().count(), 2);
        m.verify_duration.record_outcome(5.0, false);
        std::thread::sleep(ONE_EXPORT + Duration::from_millis(5));
        assert_eq!(reading.read().count(), 3);
    }
}
