//! The protobuf exposition: each family of the model as one
//! `io.prometheus.client.MetricFamily`, length-delimited, as Prometheus asks
//! for it first when it stores native histograms. The messages are the
//! fields we write of `prometheus/client_model`'s `metrics.proto`, derived
//! with prost (so no `protoc` at build time); their tags are that file's.
//!
//! A family has the 0.0.4 text's name (a counter's with `_total`, as
//! Prometheus takes a protobuf counter's name as it is), the same labels
//! (the series' own, then the family's), and a histogram its classic
//! buckets without `+Inf` (Prometheus adds it from the count) and, where it
//! keeps them, its native buckets: the schema, the zero bucket, and the
//! buckets in use as spans of neighbours with each count given as the
//! difference from the one before.

use super::model::{ExemplarSample, Family, Kind, Native, Side, Value};

/// The `Content-Type` of a protobuf exposition.
pub(crate) const PROTOBUF_CONTENT_TYPE: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

#[derive(Clone, PartialEq, prost::Message)]
struct MetricFamily {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    help: String,
    #[prost(enumeration = "MetricType", tag = "3")]
    r#type: i32,
    #[prost(message, repeated, tag = "4")]
    metric: Vec<Metric>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
enum MetricType {
    Counter = 0,
    Gauge = 1,
    Histogram = 4,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Metric {
    #[prost(message, repeated, tag = "1")]
    label: Vec<LabelPair>,
    #[prost(message, optional, tag = "2")]
    gauge: Option<Number>,
    #[prost(message, optional, tag = "3")]
    counter: Option<Number>,
    #[prost(message, optional, tag = "7")]
    histogram: Option<Histogram>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LabelPair {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    value: String,
}

/// `Gauge` and `Counter` alike: a value, tag 1.
#[derive(Clone, PartialEq, prost::Message)]
struct Number {
    #[prost(double, tag = "1")]
    value: f64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Histogram {
    #[prost(uint64, tag = "1")]
    sample_count: u64,
    #[prost(double, tag = "2")]
    sample_sum: f64,
    #[prost(message, repeated, tag = "3")]
    bucket: Vec<Bucket>,
    #[prost(sint32, optional, tag = "5")]
    schema: Option<i32>,
    #[prost(double, optional, tag = "6")]
    zero_threshold: Option<f64>,
    #[prost(uint64, optional, tag = "7")]
    zero_count: Option<u64>,
    #[prost(message, repeated, tag = "12")]
    positive_span: Vec<BucketSpan>,
    // Unpacked, as proto2 (`metrics.proto`) writes a repeated number.
    #[prost(sint64, repeated, packed = "false", tag = "13")]
    positive_delta: Vec<i64>,
    #[prost(message, repeated, tag = "16")]
    exemplars: Vec<Exemplar>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct BucketSpan {
    #[prost(sint32, tag = "1")]
    offset: i32,
    #[prost(uint32, tag = "2")]
    length: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Bucket {
    #[prost(uint64, tag = "1")]
    cumulative_count: u64,
    #[prost(double, tag = "2")]
    upper_bound: f64,
    #[prost(message, optional, tag = "3")]
    exemplar: Option<Exemplar>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Exemplar {
    #[prost(message, repeated, tag = "1")]
    label: Vec<LabelPair>,
    #[prost(double, tag = "2")]
    value: f64,
    #[prost(message, optional, tag = "3")]
    timestamp: Option<Timestamp>,
}

/// `google.protobuf.Timestamp`.
#[derive(Clone, PartialEq, prost::Message)]
struct Timestamp {
    #[prost(int64, tag = "1")]
    seconds: i64,
    #[prost(int32, tag = "2")]
    nanos: i32,
}

impl Exemplar {
    /// The message of `sample`: its trace and span ids as labels.
    fn of(sample: &ExemplarSample) -> Self {
        let pair = |name: &str, value: String| LabelPair {
            name: name.to_string(),
            value,
        };
        let seconds = sample.timestamp.floor();
        Self {
            label: vec![
                pair("trace_id", sample.exemplar.trace_id_hex()),
                pair("span_id", sample.exemplar.span_id_hex()),
            ],
            value: sample.value,
            timestamp: Some(Timestamp {
                seconds: seconds as i64,
                nanos: ((sample.timestamp - seconds) * 1e9) as i32,
            }),
        }
    }
}

impl Histogram {
    /// Sets the native histogram of `native`'s buckets.
    fn native(&mut self, native: &Native) {
        self.schema = Some(i32::from(native.schema));
        self.zero_threshold = Some(native.zero_threshold);
        self.zero_count = Some(native.zero_count);
        (self.positive_span, self.positive_delta) = spans(&native.positive);
    }
}

/// The buckets in use of `side` as spans of neighbours (the first starting
/// at its key, each next one the empty buckets after the one before), and
/// their counts, each as the difference from the one before.
fn spans(side: &Side) -> (Vec<BucketSpan>, Vec<i64>) {
    let (mut spans, mut deltas) = (Vec::<BucketSpan>::new(), Vec::new());
    let (mut previous_count, mut previous_key) = (0u64, None::<i32>);
    for (key, &count) in (side.first_key..).zip(&side.counts) {
        if count == 0 {
            continue;
        }
        match (previous_key, spans.last_mut()) {
            (Some(k), Some(span)) if k + 1 == key => span.length += 1,
            _ => spans.push(BucketSpan {
                offset: previous_key.map_or(key, |k| key - k - 1),
                length: 1,
            }),
        }
        deltas.push(count.wrapping_sub(previous_count) as i64);
        (previous_count, previous_key) = (count, Some(key));
    }
    (spans, deltas)
}

/// Appends `family` showing `series` (each its own labels and its value) as
/// one length-delimited `MetricFamily`.
pub(crate) fn write<'l, 'v, L>(
    family: &Family,
    series: impl IntoIterator<Item = (L, Value<'v>)>,
    out: &mut Vec<u8>,
) where
    L: Iterator<Item = (&'l str, &'l str)>,
{
    let pair = |name: &str, value: &str| LabelPair {
        name: name.to_string(),
        value: value.to_string(),
    };
    let own = family.labels.iter().map(|(n, v)| pair(n, v));
    let metric = series
        .into_iter()
        .map(|(labels, value)| {
            let label = labels.map(|(n, v)| pair(n, v)).chain(own.clone()).collect();
            let (mut gauge, mut counter, mut histogram) = (None, None, None);
            let mut number = |value| match family.kind {
                Kind::Counter => counter = Some(Number { value }),
                _ => gauge = Some(Number { value }),
            };
            match value {
                Value::Count(n) => number(n as f64),
                Value::Float(v) => number(v),
                Value::Histogram(value) => {
                    // One count serves both histograms, and Prometheus takes
                    // a native one only if it equals the zero bucket's plus
                    // every bucket's. A scrape reads the native counts
                    // first, so records it catches in flight are counted
                    // classic but not yet native: the native total is the
                    // count, and no classic bucket runs past it.
                    let count = value.native.map_or(value.buckets.count(), Native::total);
                    let exemplars = || value.exemplars.iter().chain(std::iter::repeat(&None));
                    let bucket = (family.bounds.iter())
                        .zip(value.buckets.cumulative())
                        .zip(exemplars())
                        .map(|((&upper_bound, cumulative), exemplar)| Bucket {
                            cumulative_count: cumulative.min(count),
                            upper_bound,
                            exemplar: exemplar.as_ref().map(Exemplar::of),
                        })
                        .collect();
                    let mut h = Histogram {
                        sample_count: count,
                        sample_sum: value.sum,
                        bucket,
                        ..Histogram::default()
                    };
                    if let Some(native) = value.native {
                        h.native(native);
                        // The native histogram's own list: every bucket's
                        // (`+Inf`'s too), each with its timestamp.
                        h.exemplars = value.exemplars.iter().flatten().map(Exemplar::of).collect();
                    }
                    histogram = Some(h);
                }
            }
            Metric {
                label,
                gauge,
                counter,
                histogram,
            }
        })
        .collect();
    let message = MetricFamily {
        name: family.name.clone(),
        help: family.help.to_string(),
        r#type: match family.kind {
            Kind::Counter => MetricType::Counter,
            Kind::Gauge => MetricType::Gauge,
            Kind::Histogram => MetricType::Histogram,
        } as i32,
        metric,
    };
    // Encoding into a Vec cannot run out of room.
    let _ = prost::Message::encode_length_delimited(&message, out);
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use prost::Message;

    use super::super::model::{Buckets, Histogram as Series};
    use super::*;

    fn family(kind: Kind, bounds: &[f64]) -> Family {
        Family {
            name: "f_total".to_string(),
            help: Cow::Borrowed("h"),
            kind,
            labels: vec![("s".to_string(), "1".to_string())],
            bounds: bounds.to_vec(),
        }
    }

    fn decoded(bytes: &[u8]) -> Vec<MetricFamily> {
        let mut rest = bytes;
        let mut families = Vec::new();
        while !rest.is_empty() {
            families.push(MetricFamily::decode_length_delimited(&mut rest).unwrap());
        }
        families
    }

    #[test]
    fn a_histogram_has_its_finite_buckets_count_sum_and_labels_in_order() {
        let mut out = Vec::new();
        let value = Value::Histogram(Series::classic(Buckets::PerBucket(&[1, 2, 3]), 2.5));
        let labels = [("a", "x")];
        write(
            &family(Kind::Histogram, &[0.5, 1.0]),
            [(labels.iter().copied(), value)],
            &mut out,
        );
        let [f] = &decoded(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(
            (f.name.as_str(), f.help.as_str(), f.r#type),
            ("f_total", "h", 4)
        );
        let m = &f.metric[0];
        let labels: Vec<_> = m.label.iter().map(|l| (&*l.name, &*l.value)).collect();
        assert_eq!(labels, [("a", "x"), ("s", "1")]);
        let h = m.histogram.as_ref().unwrap();
        assert_eq!((h.sample_count, h.sample_sum), (6, 2.5));
        let buckets: Vec<_> = h
            .bucket
            .iter()
            .map(|b| (b.upper_bound, b.cumulative_count))
            .collect();
        assert_eq!(buckets, [(0.5, 1), (1.0, 3)]);
        assert_eq!((m.gauge.as_ref(), m.counter.as_ref()), (None, None));
        assert_eq!((h.schema, h.positive_span.len()), (None, 0));
    }

    #[test]
    fn native_buckets_are_spans_of_neighbours_and_count_deltas() {
        let native = Native {
            schema: 3,
            zero_threshold: 0.001,
            zero_count: 2,
            positive: Side {
                first_key: -5,
                counts: vec![0, 4, 1, 0, 0, 0, 3, 0],
            },
        };
        let mut out = Vec::new();
        let exemplar = ExemplarSample {
            exemplar: gym_metrics_api::backend::Exemplar::new([1; 16], [2; 8]).unwrap(),
            value: 0.3,
            timestamp: 1_700_000_000.25,
        };
        let exemplars = [Some(exemplar), None];
        let value = Value::Histogram(Series {
            native: Some(&native),
            exemplars: &exemplars,
            ..Series::classic(Buckets::PerBucket(&[8, 2]), 9.0)
        });
        let none = std::iter::empty::<(&str, &str)>();
        write(&family(Kind::Histogram, &[0.5]), [(none, value)], &mut out);
        let h = decoded(&out)[0].metric[0].histogram.clone().unwrap();
        assert_eq!(
            (h.schema, h.zero_threshold, h.zero_count),
            (Some(3), Some(0.001), Some(2))
        );
        // Keys -4 and -3 (counts 4, 1), then after three empty ones key 1 (3).
        let spans: Vec<_> = h
            .positive_span
            .iter()
            .map(|s| (s.offset, s.length))
            .collect();
        assert_eq!(spans, [(-4, 2), (3, 1)]);
        assert_eq!(h.positive_delta, [4, -3, 2]);
        assert_eq!((h.sample_count, h.bucket.len()), (10, 1));
        // The exemplar on its classic bucket, and in the native list.
        let e = h.bucket[0].exemplar.clone().unwrap();
        let labels: Vec<_> = e
            .label
            .iter()
            .map(|l| (l.name.as_str(), l.value.clone()))
            .collect();
        assert_eq!(
            labels,
            [("trace_id", "01".repeat(16)), ("span_id", "02".repeat(8))]
        );
        assert_eq!(
            e.timestamp,
            Some(Timestamp {
                seconds: 1_700_000_000,
                nanos: 250_000_000
            })
        );
        assert_eq!((e.value, h.exemplars.clone()), (0.3, vec![e]));
    }

    #[test]
    fn with_records_in_flight_the_count_is_the_native_total_and_no_bucket_passes_it() {
        // Read native first: 3 values there, 5 in the classic buckets.
        let native = Native {
            schema: 3,
            zero_threshold: 0.001,
            zero_count: 1,
            positive: Side {
                first_key: 0,
                counts: vec![2],
            },
        };
        let value = Value::Histogram(Series {
            native: Some(&native),
            ..Series::classic(Buckets::PerBucket(&[4, 1]), 9.0)
        });
        let mut out = Vec::new();
        let none = std::iter::empty::<(&str, &str)>();
        write(&family(Kind::Histogram, &[0.5]), [(none, value)], &mut out);
        let h = decoded(&out)[0].metric[0].histogram.clone().unwrap();
        assert_eq!(h.sample_count, 3);
        assert_eq!(h.bucket[0].cumulative_count, 3);
    }

    /// The native buckets a scrape writes of each histogram with native
    /// buckets: their number, and (count, zero count, sum of their counts).
    fn native_buckets(bytes: &[u8]) -> Vec<(usize, (u64, u64, u64))> {
        let histograms = decoded(bytes).into_iter().flat_map(|f| f.metric);
        let histograms = histograms
            .filter_map(|m| m.histogram)
            .filter(|h| h.schema.is_some());
        histograms
            .map(|h| {
                let buckets: u32 = h.positive_span.iter().map(|s| s.length).sum();
                let mut count = 0i64;
                let counts = h.positive_delta.iter().map(|&d| {
                    count += d;
                    count as u64
                });
                let in_buckets = counts.sum::<u64>();
                let zero = h.zero_count.unwrap_or(0);
                (buckets as usize, (h.sample_count, zero, in_buckets))
            })
            .collect()
    }

    #[test]
    fn every_schema_and_bucket_limit_the_builder_takes_holds_on_the_wire() {
        use gym_metrics_api::backend::Recorder;
        // A spread from a nanosecond to 500 years: 40-odd doublings in use.
        let mut values_ms = vec![0.0, 1e-6];
        let mut v = 1e-4;
        while v < 1.6e13 {
            values_ms.push(v);
            v *= 1.37;
        }
        for schema in -4..=8 {
            for limit in [1, 2, 3, 7, 160] {
                let (recorder, handle) = crate::PrometheusBuilder::new()
                    .native_histogram_schema(schema)
                    .and_then(|b| b.native_histogram_bucket_limit(limit))
                    .unwrap()
                    .build()
                    .unwrap();
                for &ms in &values_ms {
                    recorder.record_rollout_duration_ms(ms);
                    recorder.record_verify_ms(ms, true);
                }
                let written = native_buckets(&handle.render_protobuf());
                assert!(written.len() >= 2, "{written:?}");
                for (buckets, (count, zero, in_buckets)) in written {
                    assert!(
                        buckets <= limit,
                        "schema {schema}, limit {limit}: {buckets}"
                    );
                    assert_eq!(count, zero + in_buckets, "schema {schema}, limit {limit}");
                }
            }
        }
    }

    #[test]
    fn a_counter_and_a_gauge_carry_their_value_in_their_own_field() {
        let mut out = Vec::new();
        let none = || std::iter::empty::<(&str, &str)>();
        write(
            &family(Kind::Counter, &[]),
            [(none(), Value::Count(7))],
            &mut out,
        );
        write(
            &family(Kind::Gauge, &[]),
            [(none(), Value::Float(0.25))],
            &mut out,
        );
        let families = decoded(&out);
        assert_eq!(families.len(), 2);
        assert_eq!(families[0].metric[0].counter, Some(Number { value: 7.0 }));
        assert_eq!(families[0].metric[0].gauge, None);
        assert_eq!(
            (families[1].r#type, families[1].metric[0].gauge.clone()),
            (1, Some(Number { value: 0.25 }))
        );
    }
}
