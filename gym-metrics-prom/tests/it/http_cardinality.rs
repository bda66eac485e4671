//! Attack (issue 43, door 5): 10,000 distinct paths, methods and status
//! codes through the API's tower layer over loopback, with the old
//! `http.server.duration` on (`http/dup`): the series of both HTTP families
//! stay within method (10) × route template (+ none) × status (100..=599 +
//! none) × scheme, no raw path or method spelling is a label value, and
//! nothing is logged. The endpoint's own hyper service, sent as many
//! distinct requests, records no HTTP series of its own. (Installs the
//! facade and a logger: a process of its own.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use gym_metrics_api::{HttpMethod, HttpServerRequestTimer, Role, RouteTable, UrlScheme};
use gym_metrics_prom::{PrometheusBuilder, PrometheusHandle};

use crate::common::layered::{rss_kib, serve, Client};

const STABLE: &str = "http_server_request_duration_seconds_count{";
const OLD: &str = "http_server_duration_milliseconds_count{";
const ROUTES: [&str; 2] = ["/verify", "/tasks/{id}"];

static LINES: AtomicUsize = AtomicUsize::new(0);

struct CountingLogger;
impl log::Log for CountingLogger {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            LINES.fetch_add(1, Ordering::Relaxed);
            eprintln!("log: {}", r.args());
        }
    }
    fn flush(&self) {}
}

/// The handler's status: `x-status` when sent (a handler passing on an
/// upstream's status), else by route.
fn answer(req: &http::Request<hyper::body::Incoming>) -> u16 {
    if let Some(s) = req.headers().get("x-status") {
        return s.to_str().ok().and_then(|s| s.parse().ok()).unwrap_or(500);
    }
    match (req.method().as_str(), req.uri().path()) {
        ("POST", "/verify") => 200,
        (_, "/verify") => 405,
        (_, p) if p.starts_with("/tasks/") => 200,
        _ => 404,
    }
}

/// Request `i`: a method (the nine, then a spelling of its own), a path
/// (matching a template, or not) and a query, all distinct.
fn request(i: usize) -> (String, String) {
    let method = match HttpMethod::ALL.get(i % 12) {
        Some(m) if i % 12 < 9 => m.as_str().to_string(),
        _ => format!("X{i}"),
    };
    let path = match i % 4 {
        0 => format!("/tasks/{i}?secret={i}"),
        1 => format!("/verify/{i}"),
        2 => format!("/p{i}/{i}"),
        _ => format!("/{i}"),
    };
    (method, path)
}

/// (stable series, old series, exposition bytes, render time).
fn measure(handle: &PrometheusHandle) -> (usize, usize, usize, std::time::Duration) {
    let started = Instant::now();
    let text = handle.render();
    let took = started.elapsed();
    let count = |family: &str| text.lines().filter(|l| l.starts_with(family)).count();
    for line in text.lines().filter(|l| l.starts_with("http_server_")) {
        let label = |name: &str| {
            let start = line.find(&format!("{name}=\""))? + name.len() + 2;
            line[start..].split('"').next()
        };
        if let Some(route) = label("http_route").or(label("http_target")) {
            assert!(ROUTES.contains(&route), "raw path as a label: {line}");
        }
        if let Some(method) = label("http_request_method").or(label("http_method")) {
            assert!(
                HttpMethod::ALL.iter().any(|m| m.as_str() == method),
                "raw method: {line}"
            );
        }
    }
    (count(STABLE), count(OLD), text.len(), took)
}

#[test]
fn ten_thousand_distinct_paths_methods_and_statuses_stay_within_the_templates() {
    if gym_testkit::ran_in_child() {
        return;
    }
    log::set_logger(&CountingLogger).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let guard = PrometheusBuilder::new()
        .role(Role::server("math-0", "resources"))
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_old_http_server_duration()
        .install()
        .unwrap();
    let handle = guard.handle();
    let addr = serve(RouteTable::new(ROUTES).unwrap(), answer);
    let mut client = Client::new(addr);
    let lines_at_start = LINES.load(Ordering::Relaxed);
    let (rss_before, _) = rss_kib();
    let report = |phase: &str, m: (usize, usize, usize, std::time::Duration)| {
        let (rss, peak) = rss_kib();
        eprintln!(
            "{phase}: {} stable series, {} old series, exposition {} bytes rendered in {:?}; \
             RSS {rss} KiB (peak {peak}, {rss_before} at start)",
            m.0, m.1, m.2, m.3
        );
    };

    // 1. Paths and methods only: the handler answers by route.
    let started = Instant::now();
    for i in 0..10_000 {
        let (method, path) = request(i);
        client.send(&method, &path, &[]);
    }
    let first = measure(&handle);
    report(
        &format!("10,000 paths × methods in {:?}", started.elapsed()),
        first,
    );
    // 10 methods × (2 templates + none) × the statuses the handler gives each.
    assert!(first.0 <= 10 * 3 * 2, "{first:?}");
    assert_eq!(first.1, first.0, "one old series per stable one");

    // 2. Statuses too: every code hyper can carry (100..=999), a handler
    // passing on whatever an upstream said.
    let started = Instant::now();
    for i in 0..10_000 {
        let (method, path) = request(i + 10_000);
        let status = (100 + i % 900).to_string();
        client.send(&method, &path, &[("x-status", status.as_bytes())]);
    }
    let second = measure(&handle);
    report(
        &format!("10,000 more with 900 statuses in {:?}", started.elapsed()),
        second,
    );
    // Statuses 600..=999 are recorded as none: 500 + none.
    assert!(second.0 <= 10 * 3 * 501, "{second:?}");
    assert!(second.1 <= second.0, "{second:?}");

    // 3. 10,000 distinct status numbers straight into the timer (0..10,000):
    // over https, so that every new series is one of these.
    for status in 0..10_000u16 {
        let timer =
            HttpServerRequestTimer::start(HttpMethod::Post, Some("/verify"), UrlScheme::Https);
        timer.finish(status);
    }
    let third = measure(&handle);
    report("10,000 distinct status numbers (timer)", third);
    assert_eq!(
        third.0 - second.0,
        501,
        "100..=599 and one without a status"
    );

    // 4. The endpoint's own service: 2,000 distinct requests record nothing.
    let mut endpoint = Client::new(guard.local_addr());
    for i in 0..2_000 {
        let (method, path) = request(i);
        endpoint.send(&method, &path, &[]);
    }
    let fourth = measure(&handle);
    assert_eq!(
        (fourth.0, fourth.1),
        (third.0, third.1),
        "the endpoint records none"
    );
    let lines = LINES.load(Ordering::Relaxed) - lines_at_start;
    assert_eq!(lines, 0, "nothing past the limit yet, nothing said");

    // 5. Every method × status on another route: past the 2,000-tuple
    // limit, the rest share one overflow series, said once.
    let mut sent = 0u64;
    for method in HttpMethod::ALL {
        for status in 100..600u16 {
            let timer =
                HttpServerRequestTimer::start(method, Some("/tasks/{id}"), UrlScheme::Https);
            timer.finish(status);
            sent += 1;
        }
    }
    let fifth = measure(&handle);
    report(
        &format!("{sent} method × status tuples more (timer)"),
        fifth,
    );
    assert_eq!(
        fifth.0,
        gym_metrics_kit::recording::HTTP_SERIES_LIMIT + 1,
        "{fifth:?}"
    );
    let text = handle.render();
    let overflow = text
        .lines()
        .find(|l| l.starts_with(&format!("{STABLE}otel_metric_overflow=\"true\"")))
        .unwrap_or_else(|| panic!("no overflow series in {text}"));
    let overflowed: u64 = overflow.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(overflowed > 0 && overflowed < sent, "{overflow}");
    let lines = LINES.load(Ordering::Relaxed) - lines_at_start;
    eprintln!("log lines during the attack: {lines}");
    assert_eq!(lines, 1, "the overflow said once");
    guard.shutdown().unwrap();
}
