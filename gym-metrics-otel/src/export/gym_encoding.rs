//! The gym instruments as OTLP, encoded straight from the recording core
//! (`gym_metrics_kit::recording`) at each export: the duration histograms
//! with explicit buckets or as base-2 exponential histograms from the
//! native cells (scale = schema, at most [`EXPONENTIAL_MAX_SIZE`] buckets
//! wide), each bucket's newest exemplar, the fleet gauge, and the HTTP
//! server histograms (the old `http.server.duration` too, under `http/dup`).
//! Cumulative, or delta against the previous export, as the temporality
//! preference says (for histograms, delta under `delta` and `lowmemory`).
//! The verify counters and rate are SDK observables over the same core
//! (`verify_instruments.rs`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use gym_metrics_api::backend::Instrument;
use gym_metrics_kit::recording::{
    ExemplarSample, GymMetrics, HistogramSnapshot, HttpSeriesKey, Layout, Reading,
};
use gym_metrics_kit::{SCOPE_NAME, SCOPE_VERSION};
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    exemplar, exponential_histogram_data_point::Buckets, metric::Data, number_data_point,
    AggregationTemporality, Exemplar, ExponentialHistogram, ExponentialHistogramDataPoint, Gauge,
    Histogram, HistogramDataPoint, Metric, NumberDataPoint, ScopeMetrics,
};

use crate::instruments::verify::VerifyReading;
use crate::{HistogramAggregation, TemporalityPreference};

/// The widest an exponential histogram is (buckets from its lowest in use
/// to its highest), as the specification's default `max_size`.
pub(crate) const EXPONENTIAL_MAX_SIZE: usize = 160;

/// Encodes one process's gym instruments at each export.
#[derive(Debug)]
pub(crate) struct GymEncoding {
    metrics: Arc<GymMetrics>,
    /// The verify histogram's reading of this export, shared with the SDK's
    /// verify counters and rate, so that all four agree.
    verifications: Arc<VerifyReading>,
    temporality: TemporalityPreference,
    aggregation: HistogramAggregation,
    http_dup: bool,
    /// When the recording started (the cumulative points' start time).
    start_nanos: u64,
    /// What the previous export carried, for delta points.
    previous: Mutex<Previous>,
}

/// The totals the previous export carried, and when it was taken.
#[derive(Debug, Default)]
struct Previous {
    at_nanos: u64,
    rollouts: Option<HistogramSnapshot>,
    verifications: Option<HistogramSnapshot>,
    http: BTreeMap<HttpSeriesKey, HistogramSnapshot>,
}

impl GymEncoding {
    /// An encoding of `metrics`, started now.
    pub(crate) fn new(
        metrics: Arc<GymMetrics>,
        verifications: Arc<VerifyReading>,
        temporality: TemporalityPreference,
        aggregation: HistogramAggregation,
        http_dup: bool,
    ) -> Self {
        let start_nanos = now_nanos();
        Self {
            metrics,
            verifications,
            temporality,
            aggregation,
            http_dup,
            start_nanos,
            previous: Mutex::new(Previous {
                at_nanos: start_nanos,
                ..Previous::default()
            }),
        }
    }

    /// The gym scope's metrics as they stand now.
    pub(crate) fn scope_metrics(&self) -> ScopeMetrics {
        let m = &self.metrics;
        // Locked first: the reads and the previous export's are in order.
        let mut previous = self.previous.lock().unwrap_or_else(PoisonError::into_inner);
        // The histograms with exemplars last, so that few records fall
        // between their reads and `now`.
        let http = m.http_server_request_duration.snapshot();
        let verifications = self.verifications.take();
        let rollouts = m.rollout_duration.snapshot();
        // After the reads: every exemplar read lies within its point's
        // interval (and a clock stepped back gives no interval ending before it starts).
        let now = now_nanos().max(previous.at_nanos);
        let delta = self.temporality != TemporalityPreference::Cumulative;
        let span = Span {
            start: if delta {
                previous.at_nanos
            } else {
                self.start_nanos
            },
            now,
            temporality: temporality(delta),
        };
        let mut metrics = Vec::new();
        let durations = [
            (
                Instrument::ROLLOUT_DURATION,
                &m.rollout_duration,
                &rollouts,
                &previous.rollouts,
            ),
            (
                Instrument::VERIFY_DURATION,
                &m.verify_duration,
                &verifications,
                &previous.verifications,
            ),
        ];
        for (instrument, histogram_of, current, earlier) in durations {
            let earlier = earlier.as_ref().filter(|_| delta);
            let point = since(current, earlier, histogram_of.layout());
            // A histogram appears from its first record, as an SDK one does.
            if point.count() > 0 {
                let bounds = histogram_of.boundaries().as_slice();
                let data = match self.aggregation {
                    HistogramAggregation::ExplicitBuckets => histogram(
                        &span,
                        vec![explicit_point(&span, Vec::new(), &point, bounds)],
                    ),
                    HistogramAggregation::Base2Exponential => exponential(&span, &point),
                };
                metrics.push(metric(&instrument, data));
            }
        }
        if let Some(active) = m.servers_active.as_ref().and_then(|g| g.get()) {
            let point = number(&span, Vec::new(), int(active));
            metrics.push(metric(&Instrument::SERVERS_ACTIVE, gauge(point)));
        }
        let http_bounds = m.http_server_request_duration.boundaries().as_slice();
        let http_points: Vec<_> = (http.iter())
            .map(|(key, counts)| {
                let earlier = previous.http.get(key).filter(|_| delta);
                (key, subtract(counts, earlier))
            })
            .filter(|(_, counts)| counts.count() > 0)
            .collect();
        if !http_points.is_empty() {
            let points = (http_points.iter())
                .map(|(key, counts)| {
                    explicit_point(&span, stable_attributes(key), counts, http_bounds)
                })
                .collect();
            let instrument = Instrument::HTTP_SERVER_REQUEST_DURATION;
            metrics.push(metric(&instrument, histogram(&span, points)));
            if self.http_dup {
                let points = old_points(&span, &http_points);
                let old = Instrument::HTTP_SERVER_DURATION_OLD;
                metrics.push(metric(&old, histogram(&span, points)));
            }
        }
        *previous = Previous {
            at_nanos: now,
            rollouts: Some(rollouts),
            verifications: Some(verifications),
            http,
        };
        ScopeMetrics {
            scope: Some(InstrumentationScope {
                name: SCOPE_NAME.to_string(),
                version: SCOPE_VERSION.to_string(),
                attributes: Vec::new(),
                dropped_attributes_count: 0,
            }),
            metrics,
            schema_url: String::new(),
        }
    }
}

/// A point's interval and its temporality.
struct Span {
    start: u64,
    now: u64,
    temporality: AggregationTemporality,
}

fn temporality(delta: bool) -> AggregationTemporality {
    if delta {
        AggregationTemporality::Delta
    } else {
        AggregationTemporality::Cumulative
    }
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// `current` less `earlier` (all of `current` when there is none): counts,
/// sum, native counts, and only the exemplars `earlier` did not carry.
fn since(
    current: &HistogramSnapshot,
    earlier: Option<&HistogramSnapshot>,
    layout: &Layout,
) -> HistogramSnapshot {
    let Some(earlier) = earlier else {
        return current.clone();
    };
    let mut delta = subtract(current, Some(earlier));
    let native_counts: Vec<u64> = (current.native_counts.iter())
        .zip(earlier.native_counts.iter().chain(std::iter::repeat(&0)))
        .map(|(c, e)| c.wrapping_sub(*e))
        .collect();
    delta.native = layout.reading(&native_counts);
    delta.native_counts = native_counts;
    let carried = earlier.exemplars.iter().chain(std::iter::repeat(&None));
    for (slot, carried) in delta.exemplars.iter_mut().zip(carried) {
        if slot.is_some() && slot == carried {
            *slot = None;
        }
    }
    delta
}

/// `current`'s classic counts less `earlier`'s.
fn subtract(current: &HistogramSnapshot, earlier: Option<&HistogramSnapshot>) -> HistogramSnapshot {
    let mut delta = current.clone();
    if let Some(earlier) = earlier {
        for (c, e) in delta.bucket_counts.iter_mut().zip(&earlier.bucket_counts) {
            *c = c.wrapping_sub(*e);
        }
        delta.sum -= earlier.sum;
        delta.successes = delta.successes.wrapping_sub(earlier.successes);
    }
    delta
}

fn metric(instrument: &Instrument, data: Data) -> Metric {
    Metric {
        name: instrument.name.to_string(),
        description: instrument.description.to_string(),
        unit: instrument.unit.unwrap_or_default().to_string(),
        metadata: Vec::new(),
        data: Some(data),
    }
}

fn histogram(span: &Span, data_points: Vec<HistogramDataPoint>) -> Data {
    Data::Histogram(Histogram {
        data_points,
        aggregation_temporality: span.temporality as i32,
    })
}

fn explicit_point(
    span: &Span,
    attributes: Vec<KeyValue>,
    counts: &HistogramSnapshot,
    bounds: &[f64],
) -> HistogramDataPoint {
    HistogramDataPoint {
        attributes,
        start_time_unix_nano: span.start,
        time_unix_nano: span.now,
        count: counts.count(),
        sum: Some(counts.sum),
        bucket_counts: counts.bucket_counts.clone(),
        explicit_bounds: bounds.to_vec(),
        exemplars: exemplars(&counts.exemplars),
        flags: 0,
        min: None,
        max: None,
    }
}

/// A duration histogram as a base-2 exponential histogram: its native
/// reading at most [`EXPONENTIAL_MAX_SIZE`] wide. OTLP's bucket `i` holds
/// `(base^i, base^(i+1)]`, Prometheus' key `k` holds `(base^(k-1), base^k]`.
fn exponential(span: &Span, counts: &HistogramSnapshot) -> Data {
    let reading = counts.native.clone().within_width(EXPONENTIAL_MAX_SIZE);
    let count = reading.total();
    let Reading {
        schema,
        zero_threshold,
        zero_count,
        positive,
    } = reading;
    // The count is the buckets' own (OTLP: it must equal the zero count
    // plus the buckets): a record in flight during the read is counted in
    // its classic bucket before its native one.
    let first = positive.counts.iter().position(|&c| c != 0);
    let last = positive.counts.iter().rposition(|&c| c != 0);
    let buckets = match first.zip(last) {
        Some((first, last)) => Buckets {
            offset: positive.first_key - 1 + first as i32,
            bucket_counts: positive.counts[first..=last].to_vec(),
        },
        None => Buckets::default(),
    };
    Data::ExponentialHistogram(ExponentialHistogram {
        data_points: vec![ExponentialHistogramDataPoint {
            attributes: Vec::new(),
            start_time_unix_nano: span.start,
            time_unix_nano: span.now,
            count,
            // OTLP: a sum of no values is zero.
            sum: Some(if count == 0 { 0.0 } else { counts.sum }),
            scale: i32::from(schema),
            zero_count,
            positive: Some(buckets),
            negative: Some(Buckets::default()),
            flags: 0,
            exemplars: exemplars(&counts.exemplars),
            min: None,
            max: None,
            zero_threshold,
        }],
        aggregation_temporality: span.temporality as i32,
    })
}

/// Each bucket's newest exemplar, lowest bucket first.
fn exemplars(slots: &[Option<ExemplarSample>]) -> Vec<Exemplar> {
    (slots.iter().flatten())
        .map(|sample| Exemplar {
            filtered_attributes: Vec::new(),
            time_unix_nano: (sample.timestamp * 1e9) as u64,
            span_id: sample.exemplar.span_id().to_vec(),
            trace_id: sample.exemplar.trace_id().to_vec(),
            value: Some(exemplar::Value::AsDouble(sample.value)),
        })
        .collect()
}

fn number(
    span: &Span,
    attributes: Vec<KeyValue>,
    value: number_data_point::Value,
) -> NumberDataPoint {
    NumberDataPoint {
        attributes,
        start_time_unix_nano: span.start,
        time_unix_nano: span.now,
        exemplars: Vec::new(),
        flags: 0,
        value: Some(value),
    }
}

fn int(value: u64) -> number_data_point::Value {
    number_data_point::Value::AsInt(i64::try_from(value).unwrap_or(i64::MAX))
}

fn gauge(point: NumberDataPoint) -> Data {
    Data::Gauge(Gauge {
        data_points: vec![point],
    })
}

/// One attribute.
fn attribute(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        key_strindex: 0,
    }
}

fn string(key: &str, value: &str) -> KeyValue {
    attribute(key, any_value::Value::StringValue(value.to_string()))
}

/// A status code as an integer attribute, as the SDK writes it.
fn status(key: &str, code: &str) -> Option<KeyValue> {
    Some(attribute(
        key,
        any_value::Value::IntValue(code.parse().ok()?),
    ))
}

/// The semantic conventions' attributes of one series (the status an integer).
fn stable_attributes(key: &HttpSeriesKey) -> Vec<KeyValue> {
    if key.overflow {
        return vec![overflow()];
    }
    let mut kv = vec![
        string("http.request.method", key.method.as_str()),
        string("url.scheme", key.scheme.as_str()),
    ];
    kv.extend(key.route.map(|r| string("http.route", r)));
    kv.extend(
        key.status_code
            .and_then(|s| status("http.response.status_code", s)),
    );
    kv.extend(key.error_type.map(|e| string("error.type", e)));
    kv
}

/// `otel.metric.overflow=true`, as the SDK marks its overflow series.
fn overflow() -> KeyValue {
    attribute("otel.metric.overflow", any_value::Value::BoolValue(true))
}

/// The old conventions' `http.server.duration` (ms) of the stable series:
/// `http.method`, `http.scheme`, `http.target` (the route), `http.status_code`;
/// series that differ only in `error.type` merged. Its bounds are 0 and a
/// thousand times each stable one, so each stable bucket is one old bucket.
fn old_points(
    span: &Span,
    stable: &[(&HttpSeriesKey, HistogramSnapshot)],
) -> Vec<HistogramDataPoint> {
    type OldKey = (
        bool,
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
    );
    let mut merged: BTreeMap<OldKey, HistogramSnapshot> = BTreeMap::new();
    for (key, counts) in stable {
        let old = (
            key.overflow,
            key.method.as_str(),
            key.scheme.as_str(),
            key.route,
            key.status_code,
        );
        let mut ms = (*counts).clone();
        ms.bucket_counts.insert(0, 0);
        ms.sum *= 1000.0;
        ms.exemplars.clear();
        match merged.get_mut(&old) {
            Some(total) => {
                for (t, c) in total.bucket_counts.iter_mut().zip(&ms.bucket_counts) {
                    *t = t.wrapping_add(*c);
                }
                total.sum += ms.sum;
            }
            None => {
                merged.insert(old, ms);
            }
        }
    }
    let bounds = Instrument::HTTP_SERVER_DURATION_OLD_BOUNDARIES_MS;
    (merged.into_iter())
        .map(
            |((overflow_series, method, scheme, route, status_code), counts)| {
                if overflow_series {
                    return explicit_point(span, vec![overflow()], &counts, &bounds);
                }
                let mut kv = vec![string("http.method", method), string("http.scheme", scheme)];
                kv.extend(route.map(|r| string("http.target", r)));
                kv.extend(status_code.and_then(|s| status("http.status_code", s)));
                explicit_point(span, kv, &counts, &bounds)
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use gym_metrics_api::backend::{Boundaries, Exemplar};
    use gym_metrics_api::Role;
    use gym_metrics_kit::recording::NativeConfig;

    use super::*;

    fn metrics() -> Arc<GymMetrics> {
        let m = GymMetrics::new(
            Role::orchestrator(),
            Boundaries::default(),
            NativeConfig::default(),
        );
        Arc::new(m)
    }

    fn reading(m: &Arc<GymMetrics>) -> Arc<VerifyReading> {
        Arc::new(VerifyReading::new(Arc::clone(m)))
    }

    fn find<'m>(scope: &'m ScopeMetrics, name: &str) -> Option<&'m Metric> {
        scope.metrics.iter().find(|m| m.name == name)
    }

    fn explicit(scope: &ScopeMetrics, name: &str) -> HistogramDataPoint {
        match find(scope, name).and_then(|m| m.data.clone()) {
            Some(Data::Histogram(h)) => h.data_points[0].clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn delta_points_carry_what_came_since_the_last_export_and_cumulative_ones_all() {
        let m = metrics();
        let aggregation = HistogramAggregation::ExplicitBuckets;
        let cumulative = GymEncoding::new(
            Arc::clone(&m),
            reading(&m),
            TemporalityPreference::Cumulative,
            aggregation,
            false,
        );
        let delta = GymEncoding::new(
            Arc::clone(&m),
            reading(&m),
            TemporalityPreference::Delta,
            aggregation,
            false,
        );
        m.rollout_duration.record(120.0);
        m.verify_duration.record_outcome(8.0, true);
        let (c, d) = (cumulative.scope_metrics(), delta.scope_metrics());
        assert_eq!(explicit(&c, "gym.rollout.duration_ms").count, 1);
        assert_eq!(explicit(&d, "gym.rollout.duration_ms").count, 1);
        m.rollout_duration.record(30.0);
        let (c, d) = (cumulative.scope_metrics(), delta.scope_metrics());
        let (all, new) = (
            explicit(&c, "gym.rollout.duration_ms"),
            explicit(&d, "gym.rollout.duration_ms"),
        );
        assert_eq!((all.count, all.sum), (2, Some(150.0)));
        assert_eq!((new.count, new.sum), (1, Some(30.0)));
        assert!(new.start_time_unix_nano > all.start_time_unix_nano);
        // Nothing new in delta: no verify point at all.
        assert!(find(&d, "gym.verify.duration_ms").is_none());
    }

    #[test]
    fn exponential_buckets_follow_otlps_indices_and_carry_the_exemplar() {
        let m = metrics();
        let encoding = GymEncoding::new(
            Arc::clone(&m),
            reading(&m),
            TemporalityPreference::Cumulative,
            HistogramAggregation::Base2Exponential,
            false,
        );
        let e = Exemplar::new([1; 16], [2; 8]);
        m.rollout_duration
            .record_duration_with(Duration::from_millis(4), None, e.as_ref());
        let scope = encoding.scope_metrics();
        let point = match find(&scope, "gym.rollout.duration_ms").and_then(|m| m.data.clone()) {
            Some(Data::ExponentialHistogram(h)) => h.data_points[0].clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!((point.scale, point.count, point.sum), (3, 1, Some(4.0)));
        // 4 ms = 2^2: at scale 3, the bucket (2^(15/8), 2^(16/8)], OTLP index 15.
        let positive = point.positive.unwrap();
        assert_eq!((positive.offset, positive.bucket_counts), (15, vec![1]));
        assert_eq!(point.exemplars.len(), 1);
        assert_eq!(point.exemplars[0].trace_id, vec![1; 16]);
        assert_eq!(point.exemplars[0].span_id, vec![2; 8]);
    }

    #[test]
    fn the_old_http_metric_has_the_old_names_and_milliseconds() {
        use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
        let m = metrics();
        let encoding = GymEncoding::new(
            Arc::clone(&m),
            reading(&m),
            TemporalityPreference::Cumulative,
            HistogramAggregation::ExplicitBuckets,
            true,
        );
        let ms_40 = Duration::from_millis(40);
        let request = HttpServerRequest::new(
            HttpMethod::Post,
            Some("/verify"),
            UrlScheme::Http,
            Some(200),
            ms_40,
        );
        m.http_server_request_duration.record(&request);
        let scope = encoding.scope_metrics();
        let stable = explicit(&scope, "http.server.request.duration");
        let old = explicit(&scope, "http.server.duration");
        assert_eq!(stable.sum, Some(0.04));
        assert_eq!((old.count, old.sum), (1, Some(40.0)));
        assert_eq!(old.bucket_counts.len(), stable.bucket_counts.len() + 1);
        let keys: Vec<_> = old.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "http.method",
                "http.scheme",
                "http.target",
                "http.status_code"
            ]
        );
    }
}
