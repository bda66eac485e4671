//! Issue 43, door 2: `Accept` negotiation on `/metrics`, attacked over
//! loopback. Every answer (protobuf, OpenMetrics 1.0.0 and 0.0.1, the 0.0.4
//! text; q-values, wildcards, garbage, non-ASCII bytes, a header just under
//! the 64 KiB head limit, tens of thousands of media ranges) is read by a
//! decoder that is not ours: `promtool check metrics` for the text,
//! Prometheus's OpenMetrics parser (`promtool tsdb create-blocks-from
//! openmetrics`) for OpenMetrics, the Python `protobuf` runtime for the
//! delimited protobuf. And the negotiation of a 64 KiB `Accept` costs a
//! bounded parse: 1,000 such requests timed against 1,000 plain ones.
//! (Global install: each test in its own process.)

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use gym_metrics_api::RolloutTimer;
use gym_metrics_prom::{
    MetricsBridgeOptions, PrometheusBuilder, PrometheusGuard, OPENMETRICS_CONTENT_TYPE,
    PROTOBUF_CONTENT_TYPE, TEXT_CONTENT_TYPE,
};
use opentelemetry::trace::{Tracer, TracerProvider};

use crate::common::independent::{
    keep, openmetrics_exemplar_lengths, openmetrics_parse, protobuf_decode, text_findings,
    text_histogram_problems,
};

const OPENMETRICS_0_0_1: &str = "application/openmetrics-text; version=0.0.1; charset=utf-8";
const PROTO: &str =
    "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";
const PROMETHEUS_2_NATIVE: &str = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,application/openmetrics-text;version=0.0.1;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
const PROMETHEUS_3: &str = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
/// The endpoint's request-head limit (RELIABILITY.md, bug 1): 431 above it.
const HEAD_LIMIT: usize = 64 * 1024;

/// A response as sent: status, headers (names lower-cased), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }

    /// The body, gunzipped when it says it is gzipped.
    fn plain_body(&self) -> Vec<u8> {
        if self.header("content-encoding") != Some("gzip") {
            return self.body.clone();
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&self.body[..])
            .read_to_end(&mut out)
            .expect("a gzip body");
        out
    }
}

/// `GET /metrics` with `accept` (raw bytes: any octet a client may send)
/// and, when `gzip`, `Accept-Encoding: gzip`; `Connection: close`.
fn get(addr: SocketAddr, accept: Option<&[u8]>, gzip: bool) -> Answer {
    let mut head =
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n").into_bytes();
    if let Some(accept) = accept {
        head.extend_from_slice(b"Accept: ");
        head.extend_from_slice(accept);
        head.extend_from_slice(b"\r\n");
    }
    if gzip {
        head.extend_from_slice(b"Accept-Encoding: gzip\r\n");
    }
    head.extend_from_slice(b"\r\n");
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    // A refused head may be answered (and the socket closed) before all of
    // it is written: the answer is what counts.
    let _ = stream.write_all(&head);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer head in {} bytes", raw.len()));
    let text = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = text.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line in {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// The request head's bytes besides the `Accept` value (request line, Host,
/// Connection, the Accept name and the final CRLFs).
fn head_overhead(addr: SocketAddr) -> usize {
    format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: \r\n\r\n").len()
}

/// Ranges from `one(i)` joined by `,` up to `size` bytes, then `last`.
fn ranges_then(size: usize, last: &str, one: impl Fn(usize) -> String) -> (String, usize) {
    let mut out = String::with_capacity(size);
    let mut n = 0;
    loop {
        let next = one(n);
        if out.len() + next.len() + 1 + last.len() > size {
            break;
        }
        out.push_str(&next);
        out.push(',');
        n += 1;
    }
    out.push_str(last);
    (out, n + 1)
}

/// The endpoint with a bit of everything: gym histograms (one rollout in a
/// sampled span, so OpenMetrics and protobuf carry an exemplar), verify
/// counters, and a bridged `metrics` counter and histogram.
fn endpoint() -> (PrometheusGuard, opentelemetry_sdk::trace::SdkTracerProvider) {
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .install()
        .expect("install");
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    provider.tracer("door-2").in_span("rollout", |_| {
        drop(RolloutTimer::start());
    });
    for ms in [0.5, 12.0, 480.0, 9_000.0] {
        gym_metrics_api::record_rollout_duration_ms(ms);
        gym_metrics_api::record_verify_ms(ms, ms < 100.0);
    }
    metrics::describe_counter!("door.requests", "Requests of the door-2 test");
    metrics::describe_histogram!("door.latency", "Latency of the door-2 test");
    metrics::counter!("door.requests", "kind" => "plain").increment(3);
    metrics::histogram!("door.latency", "kind" => "plain").record(0.25);
    (guard, provider)
}

/// One exchange of the first test: what was sent, what should answer.
struct Case {
    name: String,
    accept: Option<Vec<u8>>,
    gzip: bool,
    content_type: &'static str,
}

fn case(name: &str, accept: Option<&str>, gzip: bool, content_type: &'static str) -> Case {
    Case {
        name: name.to_string(),
        accept: accept.map(|a| a.as_bytes().to_vec()),
        gzip,
        content_type,
    }
}

fn cases(addr: SocketAddr) -> Vec<Case> {
    let om = OPENMETRICS_CONTENT_TYPE;
    let pb = PROTOBUF_CONTENT_TYPE;
    let text = TEXT_CONTENT_TYPE;
    let mut cases = vec![
        case("no Accept", None, false, text),
        case("empty Accept", Some(""), false, text),
        case("text 0.0.4", Some("text/plain;version=0.0.4"), false, text),
        case("text 1.0.0 (Prometheus 3)", Some("text/plain;version=1.0.0;escaping=allow-utf-8"), false, text),
        case("OpenMetrics 1.0.0", Some("application/openmetrics-text;version=1.0.0"), false, om),
        case("OpenMetrics 0.0.1", Some("application/openmetrics-text;version=0.0.1"), false, OPENMETRICS_0_0_1),
        case("OpenMetrics 0.0.1 quoted", Some("application/openmetrics-text;version=\"0.0.1\""), false, OPENMETRICS_0_0_1),
        case("OpenMetrics, no version", Some("application/openmetrics-text"), false, om),
        case("OpenMetrics 2.0.0 (unknown version)", Some("application/openmetrics-text;version=2.0.0"), false, om),
        case("OpenMetrics, upper case", Some("APPLICATION/OPENMETRICS-TEXT; VERSION=1.0.0"), false, om),
        case("protobuf", Some(PROTO), false, pb),
        case("protobuf, mixed case and quoted", Some("Application/Vnd.Google.Protobuf; Proto=\"io.prometheus.client.MetricFamily\"; Encoding=delimited"), false, pb),
        case("protobuf, text encoding", Some("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text"), false, text),
        case("protobuf, another message", Some("application/vnd.google.protobuf;proto=io.prometheus.client.Metric;encoding=delimited"), false, text),
        case("protobuf, no encoding", Some("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily"), false, text),
        case("Prometheus 2.53, native histograms", Some(PROMETHEUS_2_NATIVE), false, pb),
        case("Prometheus 2.53, native histograms, gzip", Some(PROMETHEUS_2_NATIVE), true, pb),
        case("Prometheus 3 default", Some(PROMETHEUS_3), false, om),
        case("Prometheus 3 default, gzip", Some(PROMETHEUS_3), true, om),
        case("q: text above OpenMetrics", Some("text/plain;q=0.9,application/openmetrics-text;q=0.8"), false, text),
        case("q: OpenMetrics above text", Some("text/plain;q=0.8,application/openmetrics-text;q=0.9"), false, om),
        case("q: protobuf above both", Some(&format!("text/plain;q=0.2,application/openmetrics-text;q=0.3,{PROTO};q=0.301")), false, pb),
        case("q: equal, the first wins", Some(&format!("application/openmetrics-text;q=0.5,{PROTO};q=0.5")), false, om),
        case("q=0 refuses protobuf", Some(&format!("{PROTO};q=0")), false, text),
        case("q=0 everywhere", Some("application/openmetrics-text;q=0,text/plain;q=0"), false, text),
        case("q duplicated, the first counts", Some("text/plain;q=0.5,application/openmetrics-text;q=0.4;q=0.9"), false, text),
        case("q not a qvalue (1.5, NaN, -1, 1e400, inf)", Some("application/openmetrics-text;q=1.5,application/openmetrics-text;q=NaN,application/openmetrics-text;q=-1,application/openmetrics-text;q=1e400,application/openmetrics-text;q=inf,text/plain;q=0.001"), false, text),
        case("q with four decimals", Some("text/plain;q=0.1,application/openmetrics-text;q=0.1234"), false, text),
        case("wildcard */*", Some("*/*"), false, text),
        case("wildcard application/*", Some("application/*"), false, text),
        case("wildcard above OpenMetrics", Some("*/*;q=1,application/openmetrics-text;q=0.05"), false, om),
        case("wildcards only, gzip", Some("*/*;q=0.5,text/*;q=0.9"), true, text),
        case("garbage", Some(";;;===,,,;q=,=;=,/,//,application/,/openmetrics-text"), false, text),
        case("garbage around protobuf", Some(&format!(",,;;,{PROTO};;;q=0.9;;,=,text/plain;q=nonsense")), false, pb),
        case("only commas", Some(",,,,,,,,,,"), false, text),
        case("HTML and JSON", Some("text/html,application/xhtml+xml,application/json;q=0.9"), false, text),
        case("an absurdly long parameter value", Some(&format!("application/openmetrics-text;version={}", "9".repeat(10_000))), false, om),
    ];
    // Octets a header may carry (obs-text, 0x80–0xFF): not visible ASCII, so
    // the value is unreadable as a string and the default answers.
    cases.push(Case {
        name: "non-ASCII octets (obs-text)".into(),
        accept: Some(b"application/openmetrics-text;q=\xff\xfe,\xc3\xa9/\xe2\x82\xac".to_vec()),
        gzip: false,
        content_type: text,
    });
    // Just under the 64 KiB head: tens of thousands of media ranges.
    let size = HEAD_LIMIT - head_overhead(addr) - 64;
    let (junk, n) = ranges_then(size, PROTO, |i| {
        format!("application/x-junk-{i};q=0.{:03}", i % 1000)
    });
    cases.push(Case {
        name: format!(
            "{} B Accept: {n} junk ranges (q up to 0.999), then protobuf",
            junk.len()
        ),
        accept: Some(junk.into_bytes()),
        gzip: false,
        content_type: pb,
    });
    let (tiny, n) = ranges_then(size, "application/openmetrics-text;version=0.0.1", |_| {
        "a/b".into()
    });
    cases.push(Case {
        name: format!(
            "{} B Accept: {n} tiny ranges, then OpenMetrics 0.0.1",
            tiny.len()
        ),
        accept: Some(tiny.into_bytes()),
        gzip: true,
        content_type: OPENMETRICS_0_0_1,
    });
    let params = ";x=y".repeat((size - 60) / 4);
    cases.push(Case {
        name: format!(
            "one range with {} parameters, then version=0.0.1",
            (size - 60) / 4
        ),
        accept: Some(format!("application/openmetrics-text{params};version=0.0.1").into_bytes()),
        gzip: false,
        content_type: OPENMETRICS_0_0_1,
    });
    let commas = ",".repeat(size - PROTO.len());
    cases.push(Case {
        name: format!("{} commas (empty ranges), then protobuf", commas.len()),
        accept: Some(format!("{commas}{PROTO}").into_bytes()),
        gzip: false,
        content_type: pb,
    });
    // Real ranges of scattered qualities: the first at the top quality wins.
    let quality = |i: usize| (i * 389 + 17) % 1000;
    let real = |i: usize| match i % 2 {
        0 => format!("{PROTO};q=0.{:03}", quality(i)),
        _ => format!("application/openmetrics-text;q=0.{:03}", quality(i)),
    };
    let (better, n) = ranges_then(size, "text/plain;q=0.001", real);
    let best = (0..n - 1).fold((0, 0), |best, i| {
        if quality(i) > best.1 {
            (i, quality(i))
        } else {
            best
        }
    });
    cases.push(Case {
        name: format!(
            "{} B Accept: {n} real ranges, the best q=0.{:03} at {}",
            better.len(),
            best.1,
            best.0
        ),
        accept: Some(better.into_bytes()),
        gzip: false,
        content_type: if best.0 % 2 == 0 { pb } else { om },
    });
    cases
}

#[test]
fn every_accept_answer_parses_in_an_independent_decoder() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (guard, provider) = endpoint();
    let addr = guard.local_addr();
    let mut protobuf = Vec::new();
    let (mut texts, mut openmetrics) = (0, 0);
    for case in cases(addr) {
        let answer = get(addr, case.accept.as_deref(), case.gzip);
        let name = &case.name;
        assert_eq!(answer.status, 200, "{name}");
        assert_eq!(
            answer.header("content-type"),
            Some(case.content_type),
            "{name}"
        );
        assert_eq!(
            answer.header("content-encoding") == Some("gzip"),
            case.gzip,
            "{name}: gzip only when accepted"
        );
        let body = answer.plain_body();
        if case.content_type == PROTOBUF_CONTENT_TYPE {
            protobuf.push((name.clone(), body));
            continue;
        }
        let text = String::from_utf8(body).expect("a UTF-8 text body");
        assert!(
            text_histogram_problems(&text).is_empty(),
            "{name}: {:?}",
            text_histogram_problems(&text)
        );
        if case.content_type == TEXT_CONTENT_TYPE {
            texts += 1;
            let findings = text_findings(&text);
            assert!(
                findings.is_empty(),
                "{name}: promtool: {findings:?}; {}",
                keep("door2.txt", text.as_bytes())
            );
        } else {
            openmetrics += 1;
            assert!(text.ends_with("# EOF\n"), "{name}");
            if let Err(e) = openmetrics_parse(&text) {
                panic!("{name}: {e}; {}", keep("door2.om", text.as_bytes()));
            }
            let exemplars = openmetrics_exemplar_lengths(&text);
            assert!(!exemplars.is_empty(), "{name}: the span's exemplar");
            assert!(
                exemplars.iter().all(|(_, n)| *n <= 128),
                "{name}: {exemplars:?}"
            );
        }
    }
    let bodies: Vec<Vec<u8>> = protobuf.iter().map(|(_, b)| b.clone()).collect();
    let decoded = protobuf_decode(&bodies, 160);
    for ((name, _), d) in protobuf.iter().zip(&decoded) {
        assert!(d.errors.is_empty(), "{name}: {:?}", d.errors);
        assert!(
            d.families
                .iter()
                .any(|f| f == "gym_rollout_duration_ms_milliseconds"),
            "{name}"
        );
        assert!(
            d.families.iter().any(|f| f == "door_latency"),
            "{name}: {:?}",
            d.families
        );
        assert!(
            !d.exemplar_lengths.is_empty() && d.exemplar_lengths.iter().all(|&n| n <= 128),
            "{name}"
        );
        let natives = d.histograms.iter().filter(|h| h.native.is_some()).count();
        assert!(natives >= 3, "{name}: {natives} native histograms");
    }
    eprintln!(
        "door 2: {} answers: {texts} text (promtool check metrics), {openmetrics} OpenMetrics \
         (Prometheus's parser), {} protobuf (Python protobuf {} families each)",
        texts + openmetrics + protobuf.len(),
        protobuf.len(),
        decoded.first().map_or(0, |d| d.families.len()),
    );
    drop(provider);
    guard.shutdown().expect("a clean shutdown");
}

/// Times `n` of each kind, interleaved (so that the machine's load falls
/// on both alike); stops at `deadline` whatever the count. Returns the
/// sorted times of each kind, in microseconds.
fn timed(addr: SocketAddr, kinds: &[(&str, &[u8])], n: usize, deadline: Instant) -> Vec<Vec<u64>> {
    let mut times = vec![Vec::with_capacity(n); kinds.len()];
    'outer: for _ in 0..n {
        for (k, (name, accept)) in kinds.iter().enumerate() {
            if Instant::now() > deadline {
                break 'outer;
            }
            let start = Instant::now();
            let answer = get(addr, Some(accept), false);
            times[k].push(start.elapsed().as_micros() as u64);
            assert_eq!(answer.status, 200, "{name}");
            assert_eq!(
                answer.header("content-type"),
                Some(PROTOBUF_CONTENT_TYPE),
                "{name}"
            );
        }
    }
    for t in &mut times {
        t.sort_unstable();
    }
    times
}

fn quantile(sorted: &[u64], q: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn a_64_kib_accept_of_thousands_of_ranges_costs_a_bounded_parse() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (guard, provider) = endpoint();
    let addr = guard.local_addr();

    // The head limit, found by bisection on the Accept value's length.
    let accept_of = |len: usize| "a".repeat(len).into_bytes();
    let (mut ok, mut refused) = (HEAD_LIMIT / 2, HEAD_LIMIT + 1024);
    assert_eq!(get(addr, Some(&accept_of(ok)), false).status, 200);
    assert_eq!(get(addr, Some(&accept_of(refused)), false).status, 431);
    while refused - ok > 1 {
        let mid = (ok + refused) / 2;
        match get(addr, Some(&accept_of(mid)), false).status {
            200 => ok = mid,
            431 => refused = mid,
            other => panic!("{mid} B Accept: {other}"),
        }
    }
    let head = head_overhead(addr);
    eprintln!(
        "door 2: largest Accept answered {ok} B (head {} B); {refused} B: 431",
        ok + head
    );
    assert!(
        ok + head <= HEAD_LIMIT && ok + head > HEAD_LIMIT - 1024,
        "the limit moved: {ok}"
    );

    // Each at the largest size the head takes, ending in the protobuf range.
    let (ranges, n_ranges) = ranges_then(ok, PROTO, |i| {
        format!("application/x-junk-{i};q=0.{:03}", i % 1000)
    });
    let params = format!("{PROTO}{}", ";x=y".repeat((ok - PROTO.len()) / 4));
    let commas = format!("{}{PROTO}", ",".repeat(ok - PROTO.len()));
    let kinds: [(&str, &[u8]); 4] = [
        (
            "plain (Prometheus 2.53's Accept)",
            PROMETHEUS_2_NATIVE.as_bytes(),
        ),
        ("64 KiB of junk ranges", ranges.as_bytes()),
        ("64 KiB of parameters", params.as_bytes()),
        ("64 KiB of commas", commas.as_bytes()),
    ];
    let deadline = Instant::now() + Duration::from_secs(90);
    let main = timed(addr, &kinds[..2], 1_000, deadline);
    let other = timed(addr, &kinds[2..], 200, deadline);
    let (plain, big) = (&main[0], &main[1]);
    assert!(
        plain.len() >= 200 && big.len() >= 200,
        "too few in 90 s: {} {}",
        plain.len(),
        big.len()
    );
    for (name, t) in kinds.iter().map(|k| k.0).zip(main.iter().chain(&other)) {
        eprintln!(
            "door 2: {name} ({} requests): p50 {} µs, p90 {} µs, p99 {} µs, max {} µs",
            t.len(),
            quantile(t, 0.5),
            quantile(t, 0.9),
            quantile(t, 0.99),
            t[t.len() - 1],
        );
    }
    eprintln!(
        "door 2: the junk Accept: {} B, {n_ranges} ranges",
        ranges.len()
    );
    // A bounded parse: the 64 KiB request costs its bytes on loopback and a
    // linear scan, not a multiple of the render. Bounds generous enough for
    // a loaded 2-core machine in a debug build.
    let (p50_plain, p50_big) = (quantile(plain, 0.5), quantile(big, 0.5));
    assert!(
        p50_big <= 10 * p50_plain + 20_000,
        "the 64 KiB Accept's median {p50_big} µs against {p50_plain} µs"
    );
    for t in main.iter().chain(&other) {
        assert!(
            quantile(t, 0.5) < 50_000,
            "a median over 50 ms: {:?}",
            quantile(t, 0.5)
        );
    }
    drop(provider);
    guard.shutdown().expect("a clean shutdown");
}
