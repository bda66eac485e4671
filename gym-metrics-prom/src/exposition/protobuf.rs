//! The protobuf exposition: each family of the model as one
//! `io.prometheus.client.MetricFamily`, length-delimited, as Prometheus asks
//! for it first when it stores native histograms. The messages are the
//! fields we write of `prometheus/client_model`'s `metrics.proto`, derived
//! with prost (so no `protoc` at build time); their tags are that file's.
//!
//! A family has the 0.0.4 text's name (a counter's with `_total`, as
//! Prometheus takes a protobuf counter's name as it is), the same labels
//! (the series' own, then the family's), and a histogram its classic
//! buckets without `+Inf` (Prometheus adds it from the count).

use super::model::{Family, Kind, Value};

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
}

#[derive(Clone, PartialEq, prost::Message)]
struct Bucket {
    #[prost(uint64, tag = "1")]
    cumulative_count: u64,
    #[prost(double, tag = "2")]
    upper_bound: f64,
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
                Value::Histogram(buckets, sum) => {
                    let bucket = family
                        .bounds
                        .iter()
                        .zip(buckets.cumulative())
                        .map(|(&upper_bound, cumulative_count)| Bucket {
                            cumulative_count,
                            upper_bound,
                        })
                        .collect();
                    histogram = Some(Histogram {
                        sample_count: buckets.count(),
                        sample_sum: sum,
                        bucket,
                    });
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

    use super::super::model::Buckets;
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
        let value = Value::Histogram(Buckets::PerBucket(&[1, 2, 3]), 2.5);
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
