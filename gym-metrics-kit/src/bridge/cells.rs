//! The atomics a bridged counter or gauge records into, for both backends: a
//! `metrics` handle is an `Arc` of one and records with no lookup. What a
//! backend keeps beside the value (the OpenTelemetry path's SDK counter and
//! attributes; nothing on the Prometheus path, which reads the value at
//! scrape time) is the cell's type parameter.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use metrics::{CounterFn, GaugeFn, HistogramFn};

/// Where a counter cell also forwards what it adds: `()` for nowhere.
///
/// ```
/// use gym_metrics_kit::bridge::CounterSink;
/// ().add(3); // the Prometheus path reads the cell instead
/// ```
pub trait CounterSink: Send + Sync + 'static {
    /// `delta` more was counted.
    fn add(&self, delta: u64);
}

impl CounterSink for () {
    #[inline]
    fn add(&self, _delta: u64) {}
}

/// A counter's total so far, and the sink each increase is forwarded to
/// (so that `absolute` forwards only what is new).
///
/// ```
/// use metrics::CounterFn;
/// let c = gym_metrics_kit::bridge::CounterCell::new(());
/// c.increment(3);
/// c.absolute(2); // a counter never goes down
/// assert_eq!(c.value(), 3);
/// c.absolute(10);
/// assert_eq!(c.value(), 10);
/// ```
#[derive(Debug)]
pub struct CounterCell<T = ()> {
    total: AtomicU64,
    sink: T,
}

impl<T> CounterCell<T> {
    /// Zero, forwarding to `sink`.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::CounterCell::new(()).value(), 0);
    /// ```
    pub fn new(sink: T) -> Self {
        Self {
            total: AtomicU64::new(0),
            sink,
        }
    }

    /// The total so far.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::CounterCell::new(()).value(), 0);
    /// ```
    pub fn value(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

impl<T: CounterSink> CounterFn for CounterCell<T> {
    fn increment(&self, value: u64) {
        self.total.fetch_add(value, Ordering::Relaxed);
        self.sink.add(value);
    }

    fn absolute(&self, value: u64) {
        // An absolute value below the total so far adds nothing, one above
        // it adds the difference.
        let before = self.total.fetch_max(value, Ordering::Relaxed);
        if value > before {
            self.sink.add(value - before);
        }
    }
}

/// A gauge's value as `f64` bits (`set`, `increment` and `decrement` are one
/// atomic operation each), and what the backend reports it with.
///
/// ```
/// use metrics::GaugeFn;
/// let g = gym_metrics_kit::bridge::GaugeCell::new("attributes");
/// g.set(2.5);
/// g.increment(1.0);
/// g.decrement(0.5);
/// assert_eq!(g.reading(), (3.0, &"attributes"));
/// ```
#[derive(Debug)]
pub struct GaugeCell<T = ()> {
    bits: AtomicU64,
    with: T,
}

impl<T> GaugeCell<T> {
    /// Zero, reported with `with`.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::GaugeCell::new(()).value(), 0.0);
    /// ```
    pub fn new(with: T) -> Self {
        Self {
            bits: AtomicU64::new(0.0f64.to_bits()),
            with,
        }
    }

    /// The value now.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::GaugeCell::new(()).value(), 0.0);
    /// ```
    pub fn value(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }

    /// The value now, and what to report it with.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::GaugeCell::new(7).reading(), (0.0, &7));
    /// ```
    pub fn reading(&self) -> (f64, &T) {
        (self.value(), &self.with)
    }

    fn add(&self, delta: f64) {
        // The closure always returns Some: the update cannot fail.
        let _ = self
            .bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + delta).to_bits())
            });
    }
}

impl<T: Send + Sync + 'static> GaugeFn for GaugeCell<T> {
    fn increment(&self, value: f64) {
        self.add(value);
    }

    fn decrement(&self, value: f64) {
        self.add(-value);
    }

    fn set(&self, value: f64) {
        self.bits.store(value.to_bits(), Ordering::Relaxed);
    }
}

/// Whether a dropped histogram value was logged in this process.
static DROP_LOGGED: AtomicBool = AtomicBool::new(false);

/// The largest value a bridged histogram takes: 2^512 (about 1.3e154), far
/// past anything measured in any unit, and small enough that no number of
/// records can push a sum to `+Inf` (it would take 2^512 of them).
///
/// ```
/// use gym_metrics_kit::bridge::MAX_HISTOGRAM_VALUE;
/// assert!(MAX_HISTOGRAM_VALUE > 1e154 && (MAX_HISTOGRAM_VALUE * 2f64.powi(511)).is_finite());
/// ```
pub const MAX_HISTOGRAM_VALUE: f64 = f64::from_bits((1023 + 512) << 52);

/// A histogram series of either backend (`sink`, what records), behind
/// the one rule for what a bridged histogram takes: a value from 0 to
/// [`MAX_HISTOGRAM_VALUE`], as the gym facade takes durations up to
/// 584 years. A negative value would make the `_sum` negative, which strict
/// OpenMetrics parsers refuse for the whole scrape; NaN, the infinities and
/// absurd finite values (`1e308` then `f64::MAX`) would make the sum NaN or
/// `+Inf` for ever, on either wire. Such values are dropped and counted here
/// ([`MetricsBridgeStats::dropped`](super::MetricsBridgeStats::dropped)).
///
/// ```
/// use metrics::HistogramFn;
/// struct Sum(std::sync::Mutex<f64>);
/// impl HistogramFn for Sum {
///     fn record(&self, v: f64) { *self.0.lock().unwrap() += v; }
/// }
/// let h = gym_metrics_kit::bridge::HistogramCell::new(Sum(Default::default()));
/// h.record(2.0);
/// h.record(-1.0);
/// h.record_many(f64::NAN, 3);
/// h.record(1e308);
/// assert_eq!(*h.sink().0.lock().unwrap(), 2.0);
/// assert_eq!(h.dropped(), 5);
/// ```
#[derive(Debug)]
pub struct HistogramCell<H> {
    sink: H,
    dropped: AtomicU64,
}

impl<H> HistogramCell<H> {
    /// Records into `sink`, nothing dropped yet.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::HistogramCell::new(()).dropped(), 0);
    /// ```
    pub fn new(sink: H) -> Self {
        Self {
            sink,
            dropped: AtomicU64::new(0),
        }
    }

    /// What records the values taken.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::HistogramCell::new(7).sink(), &7);
    /// ```
    pub fn sink(&self) -> &H {
        &self.sink
    }

    /// The values dropped so far (negative, NaN, infinite or above
    /// [`MAX_HISTOGRAM_VALUE`]).
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::HistogramCell::new(()).dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Whether `value` is taken; counts it dropped if not (and logs the
    /// first value dropped in this process).
    fn takes(&self, value: f64, times: u64) -> bool {
        let taken = (0.0..=MAX_HISTOGRAM_VALUE).contains(&value);
        if !taken {
            self.dropped.fetch_add(times, Ordering::Relaxed);
            if !DROP_LOGGED.swap(true, Ordering::Relaxed) {
                log::warn!(
                    target: "gym_metrics",
                    "dropped {value:e} recorded into a bridged metrics histogram: a histogram \
                     takes values from 0 to {MAX_HISTOGRAM_VALUE:e} (a negative one would make \
                     its _sum negative, which OpenMetrics parsers refuse, and a larger one could \
                     make it +Inf); counted in MetricsBridgeStats::dropped, logged once"
                );
            }
        }
        taken
    }
}

// A value taken is passed on as its magnitude: -0.0 as 0.0, whose sign
// bit the native buckets would read as the top of the exponent.
impl<H: HistogramFn> HistogramFn for HistogramCell<H> {
    fn record(&self, value: f64) {
        if self.takes(value, 1) {
            self.sink.record(value.abs());
        }
    }

    fn record_many(&self, value: f64, count: usize) {
        if self.takes(value, count as u64) {
            self.sink.record_many(value.abs(), count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Forwarded(Mutex<Vec<u64>>);

    impl CounterSink for Forwarded {
        fn add(&self, delta: u64) {
            self.0.lock().unwrap().push(delta);
        }
    }

    #[test]
    fn a_histogram_takes_zero_to_the_largest_and_its_sum_stays_finite() {
        struct Sum(Mutex<f64>);
        impl HistogramFn for Sum {
            fn record(&self, v: f64) {
                *self.0.lock().unwrap() += v;
            }
        }
        assert_eq!(MAX_HISTOGRAM_VALUE, 2f64.powi(512));
        let h = HistogramCell::new(Sum(Mutex::new(0.0)));
        for v in [0.0, -0.0, 5e-324, MAX_HISTOGRAM_VALUE] {
            h.record(v);
        }
        assert_eq!(h.dropped(), 0);
        // -0.0 went on as 0.0: the sum has no negative zero.
        assert!(h.sink().0.lock().unwrap().is_sign_positive());
        // The issue's pair: 1e308 then f64::MAX made the sum +Inf for ever.
        for v in [1e308, f64::MAX, MAX_HISTOGRAM_VALUE * 2.0, -1.0, f64::NAN] {
            h.record(v);
        }
        assert_eq!(h.dropped(), 5);
        assert_eq!(*h.sink().0.lock().unwrap(), MAX_HISTOGRAM_VALUE);
    }

    #[test]
    fn a_counter_forwards_only_what_is_new() {
        let c = CounterCell::new(Forwarded(Mutex::default()));
        c.increment(3);
        c.absolute(2);
        c.absolute(10);
        assert_eq!(c.value(), 10);
        assert_eq!(*c.sink.0.lock().unwrap(), [3, 7]);
    }
}
