//! Issue 43, door 3: native histograms and exemplars at the extremes. NaN,
//! ±∞, 0, −0, negatives, 1e308, f64::MAX, subnormals and every binary
//! magnitude from 5e-324 to 2^1023, alternating small and large, into the
//! gym histograms and a bridged `metrics` histogram, under several schemas
//! and bucket limits; exemplars on the longest ids; then a record storm
//! while scrapes render protobuf, OpenMetrics and text over HTTP. Every
//! exposition is read by a decoder that is not ours (see
//! `common::independent`). (Global state: each test in its own process.)

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gym_metrics_api::backend::{Exemplar, Recorder};
use gym_metrics_api::RolloutTimer;
use gym_metrics_kit::bridge::MAX_HISTOGRAM_VALUE;
use gym_metrics_prom::{MetricsBridgeOptions, PrometheusBuilder, PrometheusHandle};
use opentelemetry::trace::{Tracer, TracerProvider};

use crate::common::independent::{
    keep, openmetrics_exemplar_lengths, openmetrics_parse, protobuf_decode, text_findings,
    text_histogram_problems, text_histograms, DecodedHistogram, DecodedProtobuf, Native,
};

const ROLLOUT: &str = "gym_rollout_duration_ms_milliseconds";
const VERIFY: &str = "gym_verify_duration_ms_milliseconds";

/// The named extremes.
fn extremes() -> Vec<f64> {
    vec![
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        -1.0,
        -5e-324,
        -1e308,
        f64::MIN,
        1e308,
        f64::MAX,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 2.0,
        1e-300,
        1e-10,
        1.0,
        1e15,
        1e154,
        MAX_HISTOGRAM_VALUE,
        1e300,
    ]
}

/// Every binary magnitude of a positive f64 (subnormals, then 2^-1022 to
/// 2^1023, each also × 1.5), alternating from both ends: 5e-324, 2^1023,
/// 1e-323, 1.5 × 2^1022, …
fn every_magnitude() -> Vec<f64> {
    let mut ascending: Vec<f64> = (0..52).map(|k| f64::from_bits(1 << k)).collect();
    for exponent in 1..=2046u64 {
        ascending.push(f64::from_bits(exponent << 52));
        ascending.push(f64::from_bits(exponent << 52 | 1 << 51));
    }
    let (mut lo, mut hi) = (0, ascending.len() - 1);
    let mut out = Vec::with_capacity(ascending.len());
    while lo <= hi {
        out.push(ascending[lo]);
        if lo != hi {
            out.push(ascending[hi]);
        }
        lo += 1;
        hi -= 1;
    }
    out
}

/// 64 values per doubling from 2^-30 to 2^50 (the bridge's native range;
/// the gym histograms' is 2^-10 to 2^30 ms), in a stride that alternates
/// over the whole range: every bucket of schema 6 and below in use, so
/// the 160-bucket limit is passed and the schema lowered.
fn dense() -> Vec<f64> {
    const N: usize = 80 * 64;
    (0..N)
        .map(|i| (i * 2_609) % N)
        .map(|k| 2f64.powf(k as f64 / 64.0 - 30.0))
        .collect()
}

/// What a bridged histogram takes (`MetricsBridgeStats::dropped` counts the rest).
fn bridge_takes(v: f64) -> bool {
    (0.0..=MAX_HISTOGRAM_VALUE).contains(&v)
}

/// The three expositions of `handle`, each read by its decoder; panics on
/// any finding. Returns the protobuf as decoded.
fn check_all(handle: &PrometheusHandle, bucket_limit: usize, label: &str) -> DecodedProtobuf {
    let text = handle.render();
    let findings = text_findings(&text);
    assert!(
        findings.is_empty(),
        "{label}: promtool: {findings:?}; {}",
        keep("door3.txt", text.as_bytes())
    );
    let om = handle.render_openmetrics();
    if let Err(e) = openmetrics_parse(&om) {
        panic!("{label}: {e}; {}", keep("door3.om", om.as_bytes()));
    }
    for body in [&text, &om] {
        let problems = text_histogram_problems(body);
        assert!(problems.is_empty(), "{label}: {problems:?}");
    }
    let lengths = openmetrics_exemplar_lengths(&om);
    assert!(
        lengths.iter().all(|(_, n)| *n <= 128),
        "{label}: {lengths:?}"
    );
    let pb = handle.render_protobuf();
    let decoded = protobuf_decode(std::slice::from_ref(&pb), bucket_limit).remove(0);
    assert!(
        decoded.errors.is_empty(),
        "{label}: {:?}; {}",
        decoded.errors,
        keep("door3.pb", &pb)
    );
    assert!(
        decoded.exemplar_lengths.iter().all(|&n| n <= 128),
        "{label}"
    );
    // Text and protobuf agree on every histogram's count.
    let text_counts = text_histograms(&text);
    for h in &decoded.histograms {
        let counted = text_counts
            .iter()
            .filter(|((family, _), _)| family == &h.family)
            .filter(|((_, labels), _)| {
                h.labels
                    .iter()
                    .all(|(k, v)| labels.contains(&format!("{k}=\"{v}")))
            })
            .map(|(_, t)| t.count)
            .collect::<Vec<_>>();
        assert_eq!(
            counted,
            [Some(h.count as f64)],
            "{label}: {} {:?}",
            h.family,
            h.labels
        );
    }
    decoded
}

fn histogram<'a>(
    d: &'a DecodedProtobuf,
    family: &str,
    label: Option<(&str, &str)>,
) -> &'a DecodedHistogram {
    d.histograms
        .iter()
        .find(|h| {
            h.family == family
                && label.is_none_or(|(k, v)| h.labels.iter().any(|l| l.0 == k && l.1 == v))
        })
        .unwrap_or_else(|| panic!("no {family} {label:?} in {:?}", d.families))
}

fn native(h: &DecodedHistogram) -> &Native {
    h.native
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no native histogram", h.family))
}

#[test]
fn extreme_values_keep_every_exposition_valid_at_every_schema_and_limit() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let longest = Exemplar::new([0xff; 16], [0xff; 8]).expect("non-zero ids");
    let mut values = extremes();
    values.extend(every_magnitude());
    values.extend(dense());
    let configs: [(i8, usize); 6] = [(3, 160), (8, 160), (0, 10), (-4, 1), (8, 1), (-4, 160)];
    let mut figures = Vec::new();
    for (schema, limit) in configs {
        let (recorder, handle) = PrometheusBuilder::new()
            .native_histogram_schema(schema)
            .and_then(|b| b.native_histogram_bucket_limit(limit))
            .expect("a valid native configuration")
            .with_metrics_bridge(MetricsBridgeOptions::new())
            .build()
            .expect("build");
        let bridge = handle.metrics_recorder().expect("the bridge");
        for (i, &v) in values.iter().enumerate() {
            recorder.record_rollout_duration_ms(v);
            recorder.record_verify_ms(v, i % 2 == 0);
        }
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(250),
            Duration::from_secs(86_400 * 365 * 500),
            Duration::MAX,
        ] {
            recorder.record_rollout_duration_with(d, Some(&longest));
            recorder.record_verify_with(d, true, Some(&longest));
        }
        metrics::with_local_recorder(&bridge, || {
            metrics::describe_histogram!("extreme.values", "Every extreme value");
            let h = metrics::histogram!("extreme.values");
            for &v in &values {
                h.record(v);
            }
        });
        let label = format!("schema {schema}, limit {limit}");
        let decoded = check_all(&handle, limit, &label);
        let bridged = histogram(&decoded, "extreme_values", None);
        let taken = values.iter().filter(|&&v| bridge_takes(v)).count() as u64;
        assert_eq!(bridged.count, taken, "{label}: the bridged count");
        for family in [ROLLOUT, VERIFY, "extreme_values"] {
            let h = histogram(&decoded, family, None);
            let (shown, threshold, zero, buckets) = native(h);
            let populated = buckets.iter().filter(|b| b.1 != 0).count();
            assert!(populated <= limit, "{label}: {family}: {populated} buckets");
            if schema > -4 && limit >= 10 {
                assert!(
                    *shown < i64::from(schema),
                    "{label}: {family}: schema not reduced ({shown})"
                );
            }
            figures.push(format!(
                "{label}: {family}: count {}, schema {shown}, {populated} buckets, zero bucket {zero} (threshold {threshold:e})",
                h.count
            ));
        }
        // The exemplars of the longest ids: 63 of OpenMetrics' 128 code points.
        assert!(
            decoded.exemplar_lengths.contains(&63),
            "{label}: {:?}",
            decoded.exemplar_lengths
        );
    }
    for f in figures {
        eprintln!("door 3: {f}");
    }
    eprintln!(
        "door 3: {} values per histogram per configuration",
        values.len()
    );
}

/// −0 is zero: a bridged `metrics` histogram puts it in the zero bucket of
/// its native histogram, as +0 (and as its classic buckets do). Defect
/// found by this test: the bits of −0.0 read as an exponent of 2048 put it
/// in the top native bucket, (2^49.875, 2^50] at schema 3, so Prometheus
/// showed a zero as about 1.1e15; the bridge's histogram cell now passes a
/// value on as its magnitude.
#[test]
fn a_negative_zero_lands_in_the_zero_bucket_like_zero() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_recorder, handle) = PrometheusBuilder::new()
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .build()
        .expect("build");
    let bridge = handle.metrics_recorder().expect("the bridge");
    metrics::with_local_recorder(&bridge, || {
        metrics::describe_histogram!("signed.zero", "Zeros of either sign");
        for _ in 0..3 {
            metrics::histogram!("signed.zero", "sign" => "negative").record(-0.0);
            metrics::histogram!("signed.zero", "sign" => "positive").record(0.0);
        }
    });
    let decoded = check_all(&handle, 160, "signed zeros");
    for sign in ["positive", "negative"] {
        let h = histogram(&decoded, "signed_zero", Some(("sign", sign)));
        let (_, _, zero, buckets) = native(h);
        assert_eq!(
            (h.count, *zero, buckets.as_slice()),
            (3, 3, &[][..]),
            "{sign} zero: (count, zero bucket, buckets (index, count))"
        );
    }
}

/// `GET /metrics` with `accept`; the body (the endpoint answers with a
/// Content-Length and no gzip unless asked).
fn scrape(addr: SocketAddr, accept: &str) -> (String, Vec<u8>) {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let head = format!(
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    (content_type, raw[split + 4..].to_vec())
}

const PROTOBUF_ACCEPT: &str = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,*/*;q=0.1";

/// Per series, in scrape order: count, sum and every classic bucket never go down.
fn monotone(scrapes: &[Vec<(String, f64)>]) -> Result<(), String> {
    let mut last: BTreeMap<&str, f64> = BTreeMap::new();
    for (i, scrape) in scrapes.iter().enumerate() {
        for (key, value) in scrape {
            if let Some(&before) = last.get(key.as_str()) {
                if *value < before {
                    return Err(format!("scrape {i}: {key} went from {before} to {value}"));
                }
            }
            last.insert(key, *value);
        }
    }
    Ok(())
}

#[test]
fn a_record_storm_while_scrapes_render_protobuf_and_openmetrics() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .install()
        .expect("install");
    let addr = guard.local_addr();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let stop = Arc::new(AtomicBool::new(false));
    // Values the gym histograms take (0 to 2^40 ms, every magnitude) and
    // ones they refuse, alternating; the bridge's, every magnitude.
    let gym_values: Vec<(f64, bool)> = every_magnitude()
        .into_iter()
        .chain(dense())
        // Between 2^40 ms and 2^60 ms lies the 584-year cap: left out.
        .filter(|&v| v <= 2f64.powi(40) || v >= 2f64.powi(60))
        .map(|v| (v, v <= 2f64.powi(40)))
        .chain([
            (f64::NAN, false),
            (-1.0, false),
            (f64::INFINITY, false),
            (1e308, false),
            (0.0, true),
        ])
        .collect();
    let gym_values = Arc::new(gym_values);
    let bridge_values = Arc::new([every_magnitude(), dense()].concat());
    const MAX_RECORDS: u64 = 50_000_000;
    let writer = |kind: usize| {
        let (stop, gym_values, bridge_values) = (
            Arc::clone(&stop),
            Arc::clone(&gym_values),
            Arc::clone(&bridge_values),
        );
        let tracer = provider.tracer("storm");
        std::thread::spawn(move || {
            let mut taken = 0u64;
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) && (i as u64) < MAX_RECORDS {
                match kind {
                    0 => {
                        let (v, ok) = gym_values[i % gym_values.len()];
                        gym_metrics_api::record_rollout_duration_ms(v);
                        taken += u64::from(ok);
                    }
                    1 => {
                        let (v, ok) = gym_values[i % gym_values.len()];
                        gym_metrics_api::record_verify_ms(v, i % 3 != 0);
                        taken += u64::from(ok);
                    }
                    2 => {
                        let v = bridge_values[i % bridge_values.len()];
                        metrics::histogram!("storm.values").record(v);
                        taken += u64::from(bridge_takes(v));
                    }
                    _ => {
                        tracer.in_span("rollout", |_| drop(RolloutTimer::start()));
                        taken += 1;
                    }
                }
                i += 1;
            }
            taken
        })
    };
    metrics::describe_histogram!("storm.values", "Every magnitude, as fast as it goes");
    let writers: Vec<_> = (0..4).map(writer).collect();
    let scraper = |accepts: [&'static str; 2]| {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) && out.len() < 5_000 {
                let start = Instant::now();
                let (content_type, body) = scrape(addr, accepts[i % 2]);
                out.push((content_type, body, start.elapsed()));
                i += 1;
            }
            out
        })
    };
    let protobuf = scraper([PROTOBUF_ACCEPT, PROTOBUF_ACCEPT]);
    let texts = scraper([
        "application/openmetrics-text;version=1.0.0",
        "text/plain;version=0.0.4",
    ]);
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    let taken: Vec<u64> = writers
        .into_iter()
        .map(|w| w.join().expect("a writer"))
        .collect();
    let protobuf = protobuf.join().expect("the protobuf scraper");
    let texts = texts.join().expect("the text scraper");
    // The final scrape, after every record.
    let (_, last_pb) = scrape(addr, PROTOBUF_ACCEPT);
    let (_, last_om) = scrape(addr, "application/openmetrics-text;version=1.0.0");

    // Protobuf: every body decoded and checked, then monotone, then exact.
    let mut bodies: Vec<Vec<u8>> = protobuf.iter().map(|(_, b, _)| b.clone()).collect();
    assert!(protobuf
        .iter()
        .all(|(t, _, _)| t.contains("application/vnd.google.protobuf")));
    bodies.push(last_pb);
    let decoded = protobuf_decode(&bodies, 160);
    let mut series = Vec::new();
    let (mut natives, mut max_buckets, mut schemas) = (0, 0, std::collections::BTreeSet::new());
    for (i, d) in decoded.iter().enumerate() {
        assert!(
            d.errors.is_empty(),
            "protobuf scrape {i}: {:?}; {}",
            d.errors,
            keep("door3-storm.pb", &bodies[i])
        );
        assert!(d.exemplar_lengths.iter().all(|&n| n <= 128));
        let mut values = Vec::new();
        for h in &d.histograms {
            let key = format!("{}{:?}", h.family, h.labels);
            values.push((format!("{key} count"), h.count as f64));
            values.push((format!("{key} sum"), h.sum));
            for (le, c) in &h.classic {
                values.push((format!("{key} le={le}"), *c as f64));
            }
            if let Some((schema, _, _, buckets)) = &h.native {
                natives += 1;
                max_buckets = max_buckets.max(buckets.len());
                schemas.insert(*schema);
            }
        }
        series.push(values);
    }
    monotone(&series).expect("protobuf scrapes never go back");
    let last = decoded.last().expect("the final scrape");
    let rollouts = histogram(last, ROLLOUT, None).count;
    assert_eq!(
        rollouts,
        taken[0] + taken[3],
        "every rollout, the timers' too"
    );
    let verified: u64 = last
        .histograms
        .iter()
        .filter(|h| h.family == VERIFY)
        .map(|h| h.count)
        .sum();
    assert_eq!(verified, taken[1]);
    assert_eq!(histogram(last, "storm_values", None).count, taken[2]);

    // Text and OpenMetrics: each parsed by promtool (every 10th, and the
    // final one), all checked for _count = +Inf and monotone.
    let (mut om_series, mut text_series) = (Vec::new(), Vec::new());
    let mut checked = 0;
    for (i, (content_type, body, _)) in texts.iter().enumerate() {
        let text = std::str::from_utf8(body).expect("UTF-8");
        let problems = text_histogram_problems(text);
        assert!(
            problems.is_empty(),
            "scrape {i} ({content_type}): {problems:?}"
        );
        let is_om = content_type.starts_with("application/openmetrics-text");
        if i % 10 < 2 {
            checked += 1;
            if is_om {
                openmetrics_parse(text).unwrap_or_else(|e| {
                    panic!("scrape {i}: {e}; {}", keep("door3-storm.om", body))
                });
                assert!(openmetrics_exemplar_lengths(text)
                    .iter()
                    .all(|(_, n)| *n <= 128));
            } else {
                let findings = text_findings(text);
                assert!(findings.is_empty(), "scrape {i}: {findings:?}");
            }
        }
        let values: Vec<(String, f64)> = text_histograms(text)
            .into_iter()
            .flat_map(|((family, labels), h)| {
                let key = format!("{family}{{{labels}}}");
                let mut v = vec![
                    (format!("{key} count"), h.count.unwrap_or(f64::NAN)),
                    (format!("{key} sum"), h.sum.unwrap_or(f64::NAN)),
                ];
                v.extend(
                    h.buckets
                        .iter()
                        .map(|(le, c)| (format!("{key} le={le}"), *c)),
                );
                v
            })
            .collect();
        if is_om {
            om_series.push(values)
        } else {
            text_series.push(values)
        }
    }
    monotone(&om_series).expect("OpenMetrics scrapes never go back");
    monotone(&text_series).expect("text scrapes never go back");
    let last_om = String::from_utf8(last_om).expect("UTF-8");
    openmetrics_parse(&last_om).expect("the final OpenMetrics scrape");
    let final_counts = text_histograms(&last_om);
    let om_rollouts = final_counts
        .iter()
        .find(|((f, _), _)| f == ROLLOUT)
        .and_then(|(_, h)| h.count);
    assert_eq!(om_rollouts, Some((taken[0] + taken[3]) as f64));

    let times = |s: &[(String, Vec<u8>, Duration)]| {
        let mut t: Vec<u128> = s.iter().map(|x| x.2.as_micros()).collect();
        t.sort_unstable();
        (
            t.len(),
            t[t.len() / 2],
            t[t.len() * 99 / 100],
            t[t.len() - 1],
        )
    };
    eprintln!(
        "door 3 storm: records taken {taken:?} (rollout, verify, bridged, exemplar timers) in 3 s; \
         protobuf scrapes {:?} (n, p50/p99/max µs), {natives} native histograms checked, \
         at most {max_buckets} buckets, schemas {schemas:?}; text/OpenMetrics scrapes {:?}, {checked} through promtool; \
         final protobuf {} B",
        times(&protobuf),
        times(&texts),
        last.bytes,
    );
    assert!(
        protobuf.len() >= 20 && texts.len() >= 20,
        "too few scrapes: {} {}",
        protobuf.len(),
        texts.len()
    );
    drop(provider);
    guard.shutdown().expect("a clean shutdown");
}
