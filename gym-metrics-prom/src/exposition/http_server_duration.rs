//! `http.server.duration`, the HTTP semantic conventions' old server metric
//! (milliseconds, the old attribute names), for a process whose
//! `OTEL_SEMCONV_STABILITY_OPT_IN` lists `http/dup`: derived at each scrape
//! from `http.server.request.duration`'s counts, so nothing is recorded
//! twice. Its boundaries are 0 and a thousand times each stable one, so
//! each stable bucket is one old bucket. Only a request timed at exactly
//! 0 ns (which no monotonic clock gives) would count in `le="5"`, not in
//! `le="0"`. The old metric had no native buckets, and has none here.

use std::collections::BTreeMap;

use super::model::{gather_order, HttpSeries, Labels};

/// One old series: its labels, its counts per bucket (`le="0"` first,
/// `+Inf` last) and its sum in milliseconds.
pub(crate) type HttpServerDurationSeries = (Labels, Vec<u64>, f64);

/// The old name of each stable label the old conventions have (the stable
/// `error_type` has no old twin); `http.target` held the route template.
const OLD_NAMES: [(&str, &str); 5] = [
    ("http_request_method", "http_method"),
    ("http_response_status_code", "http_status_code"),
    ("http_route", "http_target"),
    ("otel_metric_overflow", "otel_metric_overflow"),
    ("url_scheme", "http_scheme"),
];

/// The old series of the stable ones: series that differ only in
/// `error_type` merged, in `gather`'s order.
pub(crate) fn derive(stable: &[HttpSeries]) -> Vec<HttpServerDurationSeries> {
    let mut merged: BTreeMap<Labels, (Vec<u64>, f64)> = BTreeMap::new();
    for (labels, counts) in stable {
        let rename = |&(name, value): &(&'static str, &'static str)| {
            let old = OLD_NAMES.iter().find(|(stable, _)| *stable == name)?;
            Some((old.1, value))
        };
        let mut old: Labels = labels.iter().filter_map(rename).collect();
        old.sort_unstable();
        let buckets = counts.bucket_counts.len() + 1;
        let (total, sum) = merged.entry(old).or_insert((vec![0; buckets], 0.0));
        for (t, c) in total[1..].iter_mut().zip(&counts.bucket_counts) {
            *t = t.wrapping_add(*c);
        }
        *sum += counts.sum * 1000.0;
    }
    let mut series: Vec<HttpServerDurationSeries> = (merged.into_iter())
        .map(|(labels, (buckets, sum))| (labels, buckets, sum))
        .collect();
    series.sort_by(|a, b| gather_order(&a.0, &b.0));
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use gym_metrics_kit::recording::HistogramSnapshot;

    fn stable(labels: Labels, buckets: Vec<u64>, sum: f64) -> HttpSeries {
        let snapshot = HistogramSnapshot {
            bucket_counts: buckets,
            sum,
            successes: 0,
            native: gym_metrics_kit::recording::Layout::seconds(Default::default()).reading(&[]),
            native_counts: Vec::new(),
            exemplars: Vec::new(),
        };
        (labels, snapshot)
    }

    #[test]
    fn old_names_an_empty_zero_bucket_first_the_sum_in_ms_and_error_types_merged() {
        let post = [("http_request_method", "POST"), ("url_scheme", "http")];
        let timed_out = [&[("error_type", "timeout")][..], &post].concat();
        let ok = [
            ("http_request_method", "GET"),
            ("http_response_status_code", "200"),
            ("http_route", "/verify"),
            ("url_scheme", "https"),
        ];
        let old = derive(&[
            stable(ok.to_vec(), vec![1, 2, 0], 0.25),
            stable(timed_out, vec![0, 0, 1], 30.0),
            stable(post.to_vec(), vec![3, 0, 0], 0.003),
        ]);
        assert_eq!(old.len(), 2);
        let (labels, buckets, sum) = &old[0];
        assert_eq!(labels, &[("http_method", "POST"), ("http_scheme", "http")]);
        assert_eq!(buckets, &[0, 3, 0, 1]);
        assert!((sum - 30_003.0).abs() < 1e-6, "{sum}");
        let (labels, buckets, sum) = &old[1];
        assert_eq!(
            labels,
            &[
                ("http_method", "GET"),
                ("http_scheme", "https"),
                ("http_status_code", "200"),
                ("http_target", "/verify"),
            ]
        );
        assert_eq!(buckets, &[0, 1, 2, 0]);
        assert_eq!(*sum, 250.0);
    }
}
