//! Attack (issue 43, door 1) over loopback: hostile `traceparent` headers
//! through a hyper 1 server behind the API's tower layer (feature
//! `trace-context`), whose handler times a verification, into this backend
//! with exemplars on. After each hostile request the verify histogram's
//! exemplar (OpenMetrics `# {trace_id="…",span_id="…"}`) is still the last
//! valid, sampled caller's, or the hostile header's own ids where W3C makes
//! it valid (a future version's extra fields); never an invalid or
//! half-parsed id. Then 10,000 distinct garbage headers: the exemplar slots
//! stay one per bucket and the process's memory where it was. (Installs the
//! facade: a process of its own.)

use std::collections::BTreeSet;
use std::time::Instant;

use gym_metrics_api::{Role, RouteTable, VerifyTimer};
use gym_metrics_prom::{PrometheusBuilder, PrometheusHandle};

use crate::common::layered::{rss_kib, serve, Client};

const BUCKET: &str = "gym_verify_duration_ms_milliseconds_bucket";

fn verify(_: &http::Request<hyper::body::Incoming>) -> u16 {
    let mut timer = VerifyTimer::start();
    timer.succeeded();
    200
}

/// A valid, sampled `traceparent` of its own for step `n`.
fn valid(n: u64) -> (String, String, String) {
    let (trace, span) = (
        format!("{:032x}", 0xa000 + n),
        format!("{:016x}", 0xb000 + n),
    );
    (format!("00-{trace}-{span}-01"), trace, span)
}

/// Every exemplar in the exposition: (trace id, span id).
fn exemplars(text: &str) -> Vec<(String, String)> {
    let id = |line: &str, key: &str| {
        let start = line.find(key)? + key.len();
        Some(line[start..].split('"').next()?.to_string())
    };
    text.lines()
        .filter(|l| l.contains("# {"))
        .map(|l| {
            let ids = (id(l, "trace_id=\""), id(l, "span_id=\""));
            let (Some(t), Some(s)) = ids else {
                panic!("an exemplar without both ids: {l}")
            };
            (t, s)
        })
        .collect()
}

/// The exemplars, each checked: 32 and 16 lowercase hex digits, not all
/// zeros, and one of `sent` (the valid ids sent).
fn checked(handle: &PrometheusHandle, sent: &BTreeSet<(String, String)>) -> Vec<(String, String)> {
    let text = handle.render_openmetrics();
    let found = exemplars(&text);
    for (t, s) in &found {
        let hex =
            |v: &str, n| v.len() == n && v.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        assert!(hex(t, 32) && hex(s, 16), "malformed exemplar ids {t} {s}");
        assert!(
            !t.trim_matches('0').is_empty() && !s.trim_matches('0').is_empty(),
            "zero id {t} {s}"
        );
        assert!(
            sent.contains(&(t.clone(), s.clone())),
            "never sent as valid: {t} {s}"
        );
    }
    let buckets = text.lines().filter(|l| l.starts_with(BUCKET)).count();
    assert!(
        found.len() <= buckets,
        "{} exemplars for {buckets} buckets",
        found.len()
    );
    found
}

/// A hostile request: its `traceparent` lines, and the ids W3C makes of them.
type Hostile = (&'static str, Vec<Vec<u8>>, Option<(String, String)>);

fn hostile() -> Vec<Hostile> {
    let (tid, sid) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let ok = Some((tid.to_string(), sid.to_string()));
    let one = |s: String| vec![s.into_bytes()];
    let tail = "a".repeat(8 << 10);
    vec![
        ("empty", one(String::new()), None),
        (
            "uppercase trace id",
            one(format!("00-{}-{sid}-01", tid.to_uppercase())),
            None,
        ),
        (
            "uppercase span id",
            one(format!("00-{tid}-{}-01", sid.to_uppercase())),
            None,
        ),
        ("uppercase flags", one(format!("00-{tid}-{sid}-0B")), None),
        (
            "all-zero trace id",
            one(format!("00-{}-{sid}-01", "0".repeat(32))),
            None,
        ),
        (
            "all-zero span id",
            one(format!("00-{tid}-{}-01", "0".repeat(16))),
            None,
        ),
        ("version ff", one(format!("ff-{tid}-{sid}-01")), None),
        (
            "version 00 with a fifth field",
            one(format!("00-{tid}-{sid}-01-extra")),
            None,
        ),
        (
            "future version, extra fields",
            one(format!("01-{tid}-{sid}-01-extra")),
            ok.clone(),
        ),
        (
            "future version, glued extra",
            one(format!("01-{tid}-{sid}-01extra")),
            None,
        ),
        ("unsampled", one(format!("00-{tid}-{sid}-00")), None),
        (
            "trace id 31 digits",
            one(format!("00-{}-{sid}-01", &tid[1..])),
            None,
        ),
        (
            "trace id 33 digits",
            one(format!("00-{tid}0-{sid}-01")),
            None,
        ),
        (
            "span id 15 digits",
            one(format!("00-{tid}-{}-01", &sid[1..])),
            None,
        ),
        ("flags 1 digit", one(format!("00-{tid}-{sid}-1")), None),
        ("underscores", one(format!("00_{tid}_{sid}_01")), None),
        ("dots", one(format!("00.{tid}.{sid}.01")), None),
        ("spaces", one(format!("00 {tid} {sid} 01")), None),
        (
            "a sign in the span id",
            one(format!("00-{tid}-+{}-01", &sid[1..])),
            None,
        ),
        (
            "two in one header",
            one(format!("00-{tid}-{sid}-01,00-{tid}-{sid}-01")),
            None,
        ),
        (
            "two headers, both valid",
            vec![
                format!("00-{tid}-{sid}-01").into_bytes(),
                valid(999).0.into_bytes(),
            ],
            None,
        ),
        (
            "two headers, the same",
            vec![format!("00-{tid}-{sid}-01").into_bytes(); 2],
            None,
        ),
        (
            "non-ASCII: UTF-8 in the trace id",
            one(format!("00-{}é-{sid}-01", &tid[..30])),
            None,
        ),
        (
            "non-ASCII: 0xff after a valid header",
            vec![[format!("01-{tid}-{sid}-01-").as_bytes(), b"\xff\xfe"].concat()],
            None,
        ),
        (
            "8 KiB: version 00 tail",
            one(format!("00-{tid}-{sid}-01-{tail}")),
            None,
        ),
        (
            "8 KiB: future version tail",
            one(format!("01-{tid}-{sid}-01-{tail}")),
            ok,
        ),
        ("8 KiB of dashes", one("-".repeat(8 << 10)), None),
        ("8 KiB of hex", one("f".repeat(8 << 10)), None),
    ]
}

/// A resources server installed on 127.0.0.1, and a client of its
/// `/verify` behind the tower layer.
fn verifier() -> (gym_metrics_prom::PrometheusGuard, Client) {
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    let addr = serve(RouteTable::new(["/verify"]).unwrap(), verify);
    (guard, Client::new(addr))
}

#[test]
fn hostile_traceparents_never_leave_an_invalid_exemplar() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (guard, mut client) = verifier();
    let handle = guard.handle();
    let mut sent = BTreeSet::new();
    let (mut step, mut statuses) = (0u64, std::collections::BTreeMap::new());
    for (name, lines, w3c) in hostile() {
        // A fresh valid caller first: the exemplar is then exactly its ids.
        step += 1;
        let (header, trace, span) = valid(step);
        assert_eq!(
            client.send("POST", "/verify", &[("traceparent", header.as_bytes())]),
            200
        );
        sent.insert((trace.clone(), span.clone()));
        assert_eq!(
            checked(&handle, &sent),
            [(trace.clone(), span.clone())],
            "{name}: set-up"
        );
        let headers: Vec<(&str, &[u8])> = lines.iter().map(|l| ("traceparent", &l[..])).collect();
        let status = client.send("POST", "/verify", &headers);
        *statuses.entry(status).or_insert(0) += 1;
        let expected = match (&w3c, status) {
            (Some(ids), 200) => {
                sent.insert(ids.clone());
                ids.clone()
            }
            _ => (trace, span),
        };
        assert_eq!(checked(&handle, &sent), [expected], "{name}");
    }
    eprintln!(
        "{} hostile requests, answered {statuses:?}",
        hostile().len()
    );
    guard.shutdown().unwrap();
}

#[test]
fn ten_thousand_distinct_garbage_traceparents_keep_exemplars_and_memory_bounded() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (guard, mut client) = verifier();
    let handle = guard.handle();
    let mut sent = BTreeSet::new();
    let mut send = |i: u64| {
        // Distinct every time, 56 B to 8 KiB; every tenth a valid caller.
        let value = if i % 10 == 0 {
            let (header, trace, span) = valid(i);
            sent.insert((trace, span));
            header
        } else {
            let mut v = format!("{:02x}-{i:x}-", i % 256);
            let size = 56 + (i as usize * 7919) % (8 << 10);
            while v.len() < size {
                v.push_str(["0a", "-", "F", "ff", "00", "é"][(i as usize + v.len()) % 6]);
            }
            v
        };
        let headers = [
            ("traceparent", value.as_bytes()),
            ("tracestate", value.as_bytes()),
        ];
        assert_eq!(client.send("POST", "/verify", &headers), 200, "request {i}");
    };
    for i in 0..1_000 {
        send(i); // warm-up: buffers and allocator pools settle
    }
    let ((before, _), started) = (rss_kib(), Instant::now());
    for i in 1_000..11_000u64 {
        send(i);
    }
    let elapsed = started.elapsed();
    let (after, peak) = rss_kib();
    let found = checked(&handle, &sent);
    let (last, trace, span) = valid(10_990);
    assert_eq!(found, [(trace, span)], "the newest valid caller: {last}");
    let text = handle.render_openmetrics();
    let completed = text
        .lines()
        .find(|l| l.starts_with("gym_verify_completed_total"))
        .unwrap();
    assert!(completed.ends_with(" 11000"), "{completed}");
    eprintln!(
        "10,000 distinct traceparent + tracestate (56 B to 8 KiB) over loopback in {elapsed:?}: \
         {} exemplar(s); RSS {before} KiB → {after} KiB (peak {peak} KiB)",
        found.len()
    );
    // Kept, 10,000 headers of up to 8 KiB would be ~80 MiB.
    assert!(after <= before + 4_096, "RSS grew: {before} → {after} KiB");
    guard.shutdown().unwrap();
}
