//! `http.server.request.duration`: a histogram with one series per attribute
//! tuple, sharded per recording thread.
//!
//! Each thread owns a small list of series behind a mutex only a scrape ever
//! contends for; a record is a thread-id lookup, an uncontended lock, a short
//! linear scan of that thread's series and two additions. The gym
//! instruments keep their own lock-free shards: nothing here touches them.
//! The number of series is bounded by the attribute values
//! [`HttpServerRequest`] can hold (see `gym_metrics_api`'s HTTP module docs).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, PoisonError, RwLock};

use crate::PerThread;
use gym_metrics_api::backend::Boundaries;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};

use super::native::{Layout, NativeConfig};
use super::sharded_histogram::HistogramSnapshot;

/// The attribute tuple identifying one series.
///
/// ```
/// use gym_metrics_api::{HttpMethod, UrlScheme};
/// let key = gym_metrics_kit::recording::HttpSeriesKey {
///     method: HttpMethod::Post, route: Some("/verify"), status_code: Some("200"),
///     scheme: UrlScheme::Http, error_type: None, overflow: false,
/// };
/// assert_eq!(key.labels()[0], ("http_request_method", "POST"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HttpSeriesKey {
    /// `http.request.method`.
    pub method: HttpMethod,
    /// `http.route`: the route template, when the request matched one.
    pub route: Option<&'static str>,
    /// `http.response.status_code`, when a response was sent.
    pub status_code: Option<&'static str>,
    /// `url.scheme`.
    pub scheme: UrlScheme,
    /// `error.type`, when the request failed.
    pub error_type: Option<&'static str>,
    /// The overflow series (`otel.metric.overflow`): every request past
    /// [`HTTP_SERIES_LIMIT`] distinct tuples; the other fields are unused.
    pub overflow: bool,
}

/// The most distinct attribute tuples `http.server.request.duration` keeps
/// (the `metrics` bridge's cardinality limit): a handler whose status a
/// client chooses could otherwise make 30,000 series (method × route ×
/// status × scheme), and every record searches its thread's series.
/// Requests past it share one overflow series, and the first is logged.
///
/// ```
/// assert_eq!(gym_metrics_kit::recording::HTTP_SERIES_LIMIT, 2000);
/// ```
pub const HTTP_SERIES_LIMIT: usize = 2000;

/// The one series past the limit.
const OVERFLOW: HttpSeriesKey = HttpSeriesKey {
    method: HttpMethod::Other,
    route: None,
    status_code: None,
    scheme: UrlScheme::Http,
    error_type: None,
    overflow: true,
};

impl HttpSeriesKey {
    fn of(request: &HttpServerRequest) -> Self {
        Self {
            method: request.method(),
            route: request.route(),
            status_code: request.status_code_str(),
            scheme: request.scheme(),
            error_type: request.error_type(),
            overflow: false,
        }
    }

    /// `(label name, value)` pairs sorted by name, as OpenTelemetry's
    /// exporter orders attributes.
    ///
    /// ```
    /// use gym_metrics_api::{HttpMethod, UrlScheme};
    /// let key = gym_metrics_kit::recording::HttpSeriesKey {
    ///     method: HttpMethod::Get, route: None, status_code: None,
    ///     scheme: UrlScheme::Https, error_type: Some("timeout"), overflow: false,
    /// };
    /// let names: Vec<_> = key.labels().into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names, ["error_type", "http_request_method", "url_scheme"]);
    /// ```
    pub fn labels(&self) -> Vec<(&'static str, &'static str)> {
        if self.overflow {
            return vec![("otel_metric_overflow", "true")];
        }
        let mut labels = Vec::with_capacity(5);
        if let Some(error) = self.error_type {
            labels.push(("error_type", error));
        }
        labels.push(("http_request_method", self.method.as_str()));
        if let Some(status) = self.status_code {
            labels.push(("http_response_status_code", status));
        }
        if let Some(route) = self.route {
            labels.push(("http_route", route));
        }
        labels.push(("url_scheme", self.scheme.as_str()));
        labels
    }
}

/// One series' counts as a scrape reads them (`successes` stays 0).
pub type HttpSeriesCounts = HistogramSnapshot;

/// One series' counts in one shard: per bucket (`+Inf` last), per native
/// slot, and the sum.
#[derive(Debug)]
struct Counts {
    buckets: Vec<u64>,
    native: Vec<u64>,
    sum: f64,
}

/// The HTTP server request histogram of one process: per-thread shards of
/// one series per attribute tuple, in seconds.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
/// use gym_metrics_kit::recording::{HttpServerHistogram, NativeConfig};
/// let h = HttpServerHistogram::new(NativeConfig::default());
/// let ms_40 = Duration::from_millis(40);
/// h.record(&HttpServerRequest::new(HttpMethod::Get, Some("/x"), UrlScheme::Http, Some(200), ms_40));
/// let series = h.snapshot();
/// assert_eq!(series.len(), 1);
/// assert_eq!(series.values().next().map(|c| c.count()), Some(1));
/// ```
#[derive(Debug)]
pub struct HttpServerHistogram {
    boundaries: Boundaries,
    native: Layout,
    shards: PerThread<Series>,
    /// The series of threads past the end of their thread-local storage (a
    /// request timer dropped at thread exit): shared, behind the same lock.
    exited: Series,
    /// Every tuple with a series of its own, up to [`HTTP_SERIES_LIMIT`]:
    /// consulted only when a thread meets a tuple for the first time.
    known: RwLock<HashSet<HttpSeriesKey>>,
}

/// One shard: its series, behind a mutex only a scrape (or, for the shared
/// shard, another exiting thread) ever contends for.
type Series = Mutex<Vec<(HttpSeriesKey, Counts)>>;

impl HttpServerHistogram {
    /// An empty histogram on the semantic conventions' boundaries, with
    /// native buckets as `native` says.
    ///
    /// ```
    /// use gym_metrics_kit::recording::{HttpServerHistogram, NativeConfig};
    /// assert!(HttpServerHistogram::new(NativeConfig::default()).snapshot().is_empty());
    /// ```
    pub fn new(native: NativeConfig) -> Self {
        Self {
            boundaries: Boundaries::new(Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S.to_vec())
                .unwrap_or_default(),
            native: Layout::seconds(native),
            shards: PerThread::new(),
            exited: Series::default(),
            known: RwLock::default(),
        }
    }

    /// Counts of a series that has seen nothing yet.
    fn empty(&self) -> Counts {
        Counts {
            buckets: vec![0; self.boundaries.as_slice().len() + 1],
            native: vec![0; self.native.slots()],
            sum: 0.0,
        }
    }

    /// The bucket bounds, in seconds.
    ///
    /// ```
    /// use gym_metrics_api::backend::Instrument;
    /// use gym_metrics_kit::recording::{HttpServerHistogram, NativeConfig};
    /// let h = HttpServerHistogram::new(NativeConfig::default());
    /// assert_eq!(h.boundaries().as_slice(), Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S);
    /// ```
    pub fn boundaries(&self) -> &Boundaries {
        &self.boundaries
    }

    /// Counts one request in its series (see [`HttpServerHistogram`]).
    #[inline]
    pub fn record(&self, request: &HttpServerRequest) {
        let key = HttpSeriesKey::of(request);
        let value = request.duration_s();
        let bucket = self.boundaries.bucket_index(value);
        let slot = self.native.slot(value);
        let shard = match self.shards.get() {
            Some(shard) => shard,
            None => self.shards.get_or(Series::default).unwrap_or(&self.exited),
        };
        // A panic elsewhere cannot leave these counts half-written: recover them.
        let mut series = shard.lock().unwrap_or_else(PoisonError::into_inner);
        let index = match series.iter().position(|(k, _)| *k == key) {
            Some(index) => index,
            None => {
                let key = self.admit(key);
                match series.iter().position(|(k, _)| *k == key) {
                    Some(index) => index,
                    None => {
                        series.push((key, self.empty()));
                        series.len() - 1
                    }
                }
            }
        };
        let counts = &mut series[index].1;
        counts.buckets[bucket] = counts.buckets[bucket].wrapping_add(1);
        counts.native[slot] = counts.native[slot].wrapping_add(1);
        counts.sum += value;
    }

    /// `key` if it has (or may have) a series of its own, else the overflow
    /// series, logging the first request sent there.
    #[cold]
    fn admit(&self, key: HttpSeriesKey) -> HttpSeriesKey {
        // Past the limit every new tuple comes here on each request: the
        // read lock lets them through side by side.
        {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if known.contains(&key) {
                return key;
            }
            if known.len() > HTTP_SERIES_LIMIT {
                return OVERFLOW;
            }
        }
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        if known.contains(&key) {
            return key;
        }
        if known.len() < HTTP_SERIES_LIMIT {
            known.insert(key);
            return key;
        }
        if !known.contains(&OVERFLOW) {
            known.insert(OVERFLOW);
            log::warn!(
                target: "gym_metrics",
                "http.server.request.duration holds its most series ({HTTP_SERIES_LIMIT} \
                 distinct method, route, status and scheme tuples): further tuples are counted \
                 in one series labelled otel.metric.overflow=true (said once); use route \
                 templates, and keep client-chosen statuses out of the answers"
            );
        }
        OVERFLOW
    }

    /// Every series, summed over the shards, in label order.
    pub fn snapshot(&self) -> BTreeMap<HttpSeriesKey, HttpSeriesCounts> {
        let mut totals: BTreeMap<HttpSeriesKey, Counts> = BTreeMap::new();
        for shard in self.shards.iter().chain([&self.exited]) {
            let series = shard.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, counts) in series.iter() {
                let total = totals.entry(*key).or_insert_with(|| self.empty());
                let pairs = (total.buckets.iter_mut().zip(&counts.buckets))
                    .chain(total.native.iter_mut().zip(&counts.native));
                for (t, c) in pairs {
                    *t = t.wrapping_add(*c);
                }
                total.sum += counts.sum;
            }
        }
        let snapshot = |c: Counts| HistogramSnapshot {
            native: self.native.reading(&c.native),
            native_counts: c.native,
            bucket_counts: c.buckets,
            sum: c.sum,
            successes: 0,
            exemplars: Vec::new(),
        };
        totals.into_iter().map(|(k, c)| (k, snapshot(c))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_limit_every_new_tuple_shares_one_overflow_series() {
        use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
        let h = HttpServerHistogram::new(NativeConfig::default());
        let ms = std::time::Duration::from_millis(3);
        let methods = HttpMethod::ALL;
        let mut sent = 0;
        'all: for status in 100..600u16 {
            for method in methods {
                if sent == HTTP_SERIES_LIMIT + 100 {
                    break 'all;
                }
                h.record(&HttpServerRequest::new(
                    method,
                    None,
                    UrlScheme::Http,
                    Some(status),
                    ms,
                ));
                sent += 1;
            }
        }
        // A tuple seen before the limit keeps its own series.
        let first = HttpServerRequest::new(methods[0], None, UrlScheme::Http, Some(100), ms);
        h.record(&first);
        let series = h.snapshot();
        assert_eq!(series.len(), HTTP_SERIES_LIMIT + 1);
        assert_eq!(series[&OVERFLOW].count(), 100);
        assert_eq!(OVERFLOW.labels(), [("otel_metric_overflow", "true")]);
        let total: u64 = series.values().map(HistogramSnapshot::count).sum();
        assert_eq!(total, sent as u64 + 1);
    }
    use std::sync::Arc;
    use std::time::Duration;

    fn request(route: Option<&'static str>, status: u16, ms: u64) -> HttpServerRequest {
        HttpServerRequest::new(
            HttpMethod::Post,
            route,
            UrlScheme::Http,
            Some(status),
            Duration::from_millis(ms),
        )
    }

    #[test]
    fn one_series_per_attribute_tuple_exact_across_threads() {
        let h = Arc::new(HttpServerHistogram::new(NativeConfig::default()));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let h = Arc::clone(&h);
                std::thread::spawn(move || {
                    for i in 0..1_000u64 {
                        h.record(&request(Some("/verify"), 200, 5));
                        if i % 10 == 0 {
                            h.record(&request(None, 404, 20_000));
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let s = h.snapshot();
        assert_eq!(s.len(), 2);
        let (ok_key, ok) = s.iter().find(|(k, _)| k.route.is_some()).unwrap();
        assert_eq!(ok.count(), 4_000);
        assert_eq!(ok.bucket_counts[0], 4_000); // 0.005 s is le="0.005"
        assert_eq!(ok_key.status_code, Some("200"));
        let (_, missing) = s.iter().find(|(k, _)| k.route.is_none()).unwrap();
        assert_eq!(missing.count(), 400);
        assert_eq!(missing.bucket_counts[14], 400); // 20 s: +Inf
        assert!((missing.sum - 8_000.0).abs() < 1e-6);
    }

    #[test]
    fn labels_are_sorted_by_name_and_absent_attributes_left_out() {
        let key = HttpSeriesKey::of(&request(Some("/verify"), 503, 1));
        let names: Vec<_> = key.labels().iter().map(|l| l.0).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert_eq!(key.labels()[0], ("error_type", "503"));
        let key = HttpSeriesKey::of(&request(None, 200, 1));
        assert_eq!(
            key.labels(),
            [
                ("http_request_method", "POST"),
                ("http_response_status_code", "200"),
                ("url_scheme", "http")
            ]
        );
    }
}
