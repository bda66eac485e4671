//! Attack (issue 43, door 1): hostile `traceparent` headers through the
//! tower layer (feature `trace-context`). Every header is judged by an
//! oracle written here from the W3C Trace Context text, independently of
//! the parser: the handler must run in exactly the oracle's context (the
//! header's trace and span, remote, its sampled bit) or in none, never in a
//! half-parsed one; nothing stays attached after a request; and 10,000
//! distinct garbage headers leave the process's memory where it was.
//! (Installs the facade: a process of its own.)
#![cfg(all(feature = "trace-context", not(feature = "off")))]

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{install, HttpServerMetricsLayer, Role, RouteTable};
use opentelemetry::trace::TraceContextExt;
use tower::{service_fn, Layer, Service};

const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// What the handler saw: (trace id, span id, sampled), lowercase hex.
type Seen = Option<(String, String, bool)>;

struct Quiet(Role);
impl Recorder for Quiet {
    fn role(&self) -> &Role {
        &self.0
    }
    fn record_rollout_duration_ms(&self, _: f64) {}
    fn record_verify_ms(&self, _: f64, _: bool) {}
    fn record_active_servers(&self, _: u64) {}
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// The current context's remote span, as a handler sees it.
fn current() -> Seen {
    let cx = opentelemetry::Context::current();
    let span = cx.span();
    let ids = span.span_context();
    ids.is_valid().then(|| {
        assert!(ids.is_remote(), "a caller's span is remote");
        (
            ids.trace_id().to_string(),
            ids.span_id().to_string(),
            ids.is_sampled(),
        )
    })
}

/// The W3C Trace Context rules for one `traceparent` field value (the bytes
/// after the header name, OWS around them not part of the value):
///
/// - version: 2 lowercase hex digits, `ff` invalid;
/// - version `00`: exactly 55 characters, `00-<32 hex>-<16 hex>-<2 hex>`,
///   lowercase only;
/// - a higher version: at least 55 characters, the same first 55, and the
///   55th followed by `-` or the end (the forward-compatibility rule);
/// - trace id and parent id not all zeros;
/// - the sampled flag is the flags' lowest bit.
fn w3c(raw: &[u8]) -> Seen {
    let value = std::str::from_utf8(raw).ok()?;
    if !value.is_ascii() {
        return None;
    }
    let b = value.trim_matches([' ', '\t']).as_bytes();
    let lower_hex = |r: &[u8]| r.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    if b.len() < 55 || !lower_hex(&b[..2]) || &b[..2] == b"ff" {
        return None;
    }
    if b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return None;
    }
    let (trace, parent, flags) = (&b[3..35], &b[36..52], &b[53..55]);
    if !lower_hex(trace) || !lower_hex(parent) || !lower_hex(flags) {
        return None;
    }
    if &b[..2] == b"00" && b.len() != 55 {
        return None;
    }
    if b.len() > 55 && b[55] != b'-' {
        return None;
    }
    if trace.iter().all(|&c| c == b'0') || parent.iter().all(|&c| c == b'0') {
        return None;
    }
    let text = |r: &[u8]| String::from_utf8_lossy(r).into_owned();
    let sampled = u8::from_str_radix(&text(flags), 16).ok()? & 1 == 1;
    Some((text(trace), text(parent), sampled))
}

/// Every hostile header: the brief's list, every one-byte change of a valid
/// header, every truncation, versions, flags, sizes, and 2,000
/// pseudo-random near-misses. Values a `HeaderValue` cannot hold (a newline)
/// are left out: no HTTP request can carry them.
fn corpus() -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = Vec::new();
    let mut add = |v: Vec<u8>| all.push(v);
    let (tid, sid) = (&VALID[3..35], &VALID[36..52]);
    for s in [
        "",
        "-",
        "---",
        "00",
        "00-",
        VALID,
        &VALID.to_uppercase(),
        &VALID.replace("4bf92f", "4BF92F"),
        &VALID.replace("00f067aa", "00F067AA"),
        &format!("00-{tid}-{sid}-0A"),
        &format!("00-{}-{sid}-01", "0".repeat(32)),
        &format!("00-{tid}-{}-01", "0".repeat(16)),
        &format!("00-{}-{}-01", "0".repeat(32), "0".repeat(16)),
        &format!("ff-{tid}-{sid}-01"),
        &format!("ff-{tid}-{sid}-01-extra"),
        &format!("FF-{tid}-{sid}-01"),
        &format!("01-{tid}-{sid}-01-extra"),
        &format!("01-{tid}-{sid}-01-"),
        &format!("01-{tid}-{sid}-01"),
        &format!("01-{tid}-{sid}-01extra"),
        &format!("01-{tid}-{sid}-01.extra"),
        &format!("fe-{tid}-{sid}-00-what-the-future-holds"),
        &format!("00-{tid}-{sid}-01-extra"),
        &format!("00-{tid}-{sid}-01-"),
        &format!("00_{tid}_{sid}_01"),
        &format!("00.{tid}.{sid}.01"),
        &format!("00 {tid} {sid} 01"),
        &format!("00-{tid}-{sid}-01,00-{tid}-{sid}-01"),
        &format!("00-{tid}-{sid}-01, {VALID}"),
        &format!("00-{tid}{sid}-01"),
        &format!("00--{tid}-{sid}-01"),
        &format!("000-{tid}-{sid}-01"),
        &format!("0-{tid}-{sid}-01"),
        &format!("00-{tid}a-{sid}-01"),
        &format!("00-{tid}-{sid}a-01"),
        &format!("00-{tid}-{sid}-1"),
        &format!("00-{tid}-{sid}-001"),
        &format!("00-+{}-{sid}-01", &tid[1..]),
        &format!("00-{tid}-+{}-01", &sid[1..]),
        &format!("00-{tid}-{sid}-+1"),
        &format!("00-0x{}-{sid}-01", &tid[2..]),
        &format!("  {VALID}\t"),
        &format!("\t{VALID}"),
        &format!("{VALID} x"),
    ] {
        add(s.as_bytes().to_vec());
    }
    // Every flags value: the sampled bit is the lowest, the rest ignored.
    for flags in 0..=255u8 {
        add(format!("00-{tid}-{sid}-{flags:02x}").into_bytes());
        add(format!("00-{tid}-{sid}-{flags:02X}").into_bytes());
    }
    // Every version: ff invalid, 00 exact, the rest forward-compatible.
    for version in 0..=255u8 {
        add(format!("{version:02x}-{tid}-{sid}-01").into_bytes());
        add(format!("{version:02x}-{tid}-{sid}-01-x").into_bytes());
    }
    // Every one-byte change, deletion and truncation of a valid header.
    let valid = VALID.as_bytes();
    for i in 0..valid.len() {
        for c in [
            b'A', b'F', b'g', b'-', b'0', b' ', b'x', b'\t', b'_', 0x7f, 0xc3, 0xff,
        ] {
            let mut v = valid.to_vec();
            v[i] = c;
            add(v);
        }
        let mut v = valid.to_vec();
        v.remove(i);
        add(v);
        let mut v = valid.to_vec();
        v.insert(i, b'a');
        add(v);
        add(valid[..i].to_vec());
    }
    // Non-ASCII: UTF-8 and raw high bytes, inside and after.
    add(VALID.replace("4bf9", "4bé").into_bytes());
    add([valid, "-é".as_bytes()].concat());
    add([&b"01"[..], &valid[2..], &b"-\xff\xfe"[..]].concat());
    // Sizes: 8 KiB of forward-compatible tail, of version 00 tail, of junk.
    let tail = "a".repeat(8 << 10);
    add(format!("01-{tid}-{sid}-01-{tail}").into_bytes());
    add(format!("00-{tid}-{sid}-01-{tail}").into_bytes());
    add(format!("{VALID}{tail}").into_bytes());
    add("-".repeat(8 << 10).into_bytes());
    add("f".repeat(8 << 10).into_bytes());
    // Pseudo-random near-misses (xorshift, fixed seed): valid-looking
    // alphabets, lengths around 55.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let alphabet = b"0123456789abcdefABCDEF-- \t0000";
    for _ in 0..2_000 {
        let mut v = valid.to_vec();
        let len = 50 + (next() % 12) as usize;
        v.resize(len, b'0');
        for _ in 0..(next() % 3) {
            let at = (next() % len as u64) as usize;
            v[at] = alphabet[(next() % alphabet.len() as u64) as usize];
        }
        if next() % 4 == 0 {
            v[..2].copy_from_slice(&valid[..2]);
            v[0] = b"0f"[(next() % 2) as usize];
        }
        add(v);
    }
    all.retain(|v| http::HeaderValue::from_bytes(v).is_ok());
    all
}

fn request_with(values: &[&[u8]]) -> http::Request<()> {
    let mut request = http::Request::new(());
    for v in values {
        let value = http::HeaderValue::from_bytes(v).expect("a sendable value");
        request.headers_mut().append("traceparent", value);
    }
    request
}

fn show(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    if s.len() > 80 {
        format!("{}… ({} bytes)", &s[..60], raw.len())
    } else {
        format!("{s:?}")
    }
}

#[test]
fn every_hostile_traceparent_yields_the_w3c_context_or_none() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _ = install(Quiet(Role::server("s-0", "resources")));
    let mut service = HttpServerMetricsLayer::new(RouteTable::default()).layer(service_fn(
        |_: http::Request<()>| async { Ok::<_, Infallible>(http::Response::new(current())) },
    ));
    let mut call = |request| {
        let seen = block_on(service.call(request))
            .unwrap_or_else(|e| match e {})
            .into_body();
        assert_eq!(current(), None, "nothing stays attached after a request");
        seen
    };
    let corpus = corpus();
    let (mut valid, mut wrong) = (0, Vec::new());
    for raw in &corpus {
        let (expected, seen) = (w3c(raw), call(request_with(&[raw])));
        valid += usize::from(expected.is_some());
        if seen != expected {
            wrong.push(format!("{}: {seen:?}, W3C: {expected:?}", show(raw)));
        }
    }
    // Repeated headers: never trusted, whatever each says alone.
    let bad = b"00-00000000000000000000000000000000-00f067aa0ba902b7-01";
    let other = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let pairs: [&[&[u8]]; 5] = [
        &[VALID.as_bytes(), VALID.as_bytes()],
        &[VALID.as_bytes(), other],
        &[VALID.as_bytes(), bad],
        &[bad, VALID.as_bytes()],
        &[VALID.as_bytes(), b"", VALID.as_bytes()],
    ];
    for values in pairs {
        let seen = call(request_with(values));
        if seen.is_some() {
            wrong.push(format!("{} headers: {seen:?}, W3C: None", values.len()));
        }
    }
    eprintln!(
        "{} headers ({valid} valid by the W3C rules) and {} repeated sets",
        corpus.len(),
        pairs.len()
    );
    assert!(valid >= 300, "the corpus holds valid headers too: {valid}");
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// This process's resident set, from `/proc/self/status`, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn ten_thousand_distinct_garbage_traceparents_leave_no_memory_behind() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _ = install(Quiet(Role::server("s-0", "resources")));
    let mut service = HttpServerMetricsLayer::new(RouteTable::default()).layer(service_fn(
        |_: http::Request<()>| async { Ok::<_, Infallible>(http::Response::new(current())) },
    ));
    let mut send = |i: u64, size: usize| {
        // Distinct every time: a number, padded to `size` with hex and dashes,
        // every tenth one a valid id (a distinct trace each), so that the
        // valid path is exercised as often as the invalid ones.
        let value = if i % 10 == 0 {
            format!("00-{:032x}-{:016x}-01", i + 1, i + 1)
        } else {
            let mut v = format!("{:02x}-{i:x}-", i % 256);
            while v.len() < size {
                v.push_str(["0a", "-", "F", "ff", " ", "é"][(i as usize + v.len()) % 6]);
            }
            v
        };
        let mut request = http::Request::new(());
        let value = http::HeaderValue::from_bytes(value.as_bytes()).unwrap();
        request.headers_mut().insert("traceparent", value.clone());
        request.headers_mut().insert("tracestate", value);
        let seen = block_on(service.call(request))
            .unwrap_or_else(|e| match e {})
            .into_body();
        assert_eq!(seen.is_some(), i % 10 == 0, "request {i}");
        assert_eq!(current(), None);
    };
    for i in 0..1_000 {
        send(i, 56 + (i as usize % 8192)); // warm-up: allocator pools settle
    }
    let (before, started) = (rss_kib(), Instant::now());
    let mut peak = before;
    for i in 1_000..11_000u64 {
        send(i, 56 + (i as usize * 7919) % 8192); // up to 8 KiB each
        if i % 500 == 0 {
            peak = peak.max(rss_kib());
        }
    }
    let after = rss_kib();
    eprintln!(
        "10,000 distinct traceparent + tracestate headers (56 B to 8 KiB) in {:?}: \
         RSS {before} KiB → {after} KiB, peak {peak} KiB",
        started.elapsed()
    );
    // 10,000 × up to 8 KiB kept would be ~80 MiB; a steady state moves by
    // an allocator page or two.
    assert!(
        peak <= before + 2_048,
        "RSS grew: {before} → peak {peak} KiB"
    );
}

/// W3C: several `tracestate` headers are one list, combined as RFC 9110
/// combines repeated fields (in order, `,` between); an invalid member
/// anywhere drops the whole state and keeps the parent.
#[test]
fn repeated_tracestate_headers_are_one_list() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _ = install(Quiet(Role::server("s-0", "resources")));
    let mut service = HttpServerMetricsLayer::new(RouteTable::default()).layer(service_fn(
        |_: http::Request<()>| async {
            let cx = opentelemetry::Context::current();
            let state = cx.span().span_context().trace_state().header();
            Ok::<_, Infallible>(http::Response::new((current().is_some(), state)))
        },
    ));
    let mut state_of = |states: &[&str]| {
        let mut request = request_with(&[VALID.as_bytes()]);
        for s in states {
            let value = http::HeaderValue::from_bytes(s.as_bytes()).unwrap();
            request.headers_mut().append("tracestate", value);
        }
        let (parent, state) = block_on(service.call(request))
            .unwrap_or_else(|e| match e {})
            .into_body();
        assert!(parent, "the parent stands whatever the state: {states:?}");
        state
    };
    assert_eq!(state_of(&["a=1"]), "a=1");
    assert_eq!(state_of(&["a=1", "b=2,c=3"]), "a=1,b=2,c=3");
    assert_eq!(state_of(&["a=1", "", "b=2"]), "a=1,b=2");
    assert_eq!(state_of(&["a=1", "B=2"]), "", "an invalid member drops all");
    // More than 32 members in all: opentelemetry keeps the first 32.
    let many: Vec<String> = (0..40).map(|i| format!("k{i}=v")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(state_of(&many).split(',').count(), 32);
}
