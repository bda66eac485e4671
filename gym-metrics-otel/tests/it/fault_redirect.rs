//! A collector answering with a redirect (issue 26, finding 5): the
//! OTLP/HTTP exporter follows none. A 307 to another address must not
//! re-post the payload (and its headers, such as an API key) there, and a
//! redirect to itself must not turn one export into a burst of requests:
//! each export is one request, and its 3xx a failure logged with its status.
#![cfg(feature = "http-proto")]

use std::time::{Duration, Instant};

use crate::support::counting_logger::CountingLogger;
use crate::support::fake_collector::{Answer, FakeCollector};
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

fn pipeline(endpoint: String) -> (gym_metrics_otel::OtelRecorder, gym_metrics_otel::OtelGuard) {
    OtelBuilder::new()
        .role(Role::orchestrator())
        .endpoint(endpoint)
        .headers([("x-api-key", "k3y")])
        .export_interval(Duration::from_millis(200))
        .export_timeout(Duration::from_millis(1000))
        .shutdown_timeout(Duration::from_secs(3))
        .build()
        .expect("a valid pipeline")
}

/// Waits (at most 20 s) until `collector` saw `n` requests.
fn wait_attempts(collector: &FakeCollector, n: usize) {
    let since = Instant::now();
    while collector.attempts() < n && since.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_redirect_to_another_address_is_not_followed() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let elsewhere = FakeCollector::start(Answer::Ok);
    let collector = FakeCollector::start(Answer::Redirect(elsewhere.port()));
    let (recorder, guard) = pipeline(collector.endpoint());
    recorder.record_rollout_duration_ms(120.0);
    wait_attempts(&collector, 3);
    // Time for a followed redirect to arrive, had one been followed.
    std::thread::sleep(Duration::from_millis(300));
    let _ = guard.shutdown();
    assert!(
        collector.attempts() >= 3,
        "{} exports",
        collector.attempts()
    );
    assert_eq!(
        elsewhere.attempts(),
        0,
        "the payload was re-posted to the redirect's target: {:?}",
        elsewhere.last_headers()
    );
    let warnings: Vec<String> = log
        .lines(log::Level::Warn)
        .into_iter()
        .filter(|l| l.contains(&collector.endpoint()))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(warnings[0].contains("307"), "{warnings:#?}");
}

#[test]
fn a_redirect_to_itself_is_one_request_per_export() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let mut collector = FakeCollector::start(Answer::Ok);
    collector.set_answer(Answer::Redirect(collector.port()));
    let (recorder, guard) = pipeline(collector.endpoint());
    recorder.record_rollout_duration_ms(120.0);
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    let _ = guard.shutdown();
    let elapsed = started.elapsed();
    collector.stop();
    // One request per 200 ms export, the final one, and slack for a loaded
    // machine; following the loop is 11 requests (10 redirects) per export.
    let bound = (elapsed.as_millis() / 200) as usize + 4;
    let requests = collector.attempts();
    eprintln!("{requests} requests in {elapsed:?}");
    assert!(
        requests >= 2 && requests <= bound,
        "{requests} requests in {elapsed:?} (at most {bound})"
    );
}
