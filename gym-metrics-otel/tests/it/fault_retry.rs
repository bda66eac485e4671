//! The retry policy over OTLP/HTTP (issue 41 §2, issue 43 door 7): only
//! 429, 502, 503 and 504 are retried, with backoff, honouring a usable
//! `Retry-After`, and an export (its retries included) never outlasts its
//! timeout, whatever `Retry-After` says.
#![cfg(feature = "http-proto")]

use std::time::{Duration, Instant};

use crate::support::counting_logger::CountingLogger;
use crate::support::fake_collector::{histogram_point, int_value, Answer, FakeCollector};
use crate::support::*;
use gym_metrics_api::backend::{Instrument, Recorder};
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtelGuard, OtelRecorder};

/// A pipeline whose only exports are the test's `force_flush` calls (the
/// periodic one is a minute away), with this OTLP timeout.
fn flushed_pipeline(endpoint: String, timeout: Duration) -> (OtelRecorder, OtelGuard) {
    OtelBuilder::new()
        .role(Role::orchestrator())
        .endpoint(endpoint)
        .export_interval(Duration::from_secs(60))
        .export_timeout(timeout)
        .shutdown_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// The gaps between consecutive attempts.
fn gaps(times: &[Instant]) -> Vec<Duration> {
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

fn assert_reference_totals(
    first: &opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest,
) {
    let rollouts = histogram_point(first, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(rollouts.count, 3);
    assert_eq!(rollouts.sum, Some(48520.0));
    assert_eq!(int_value(first, Instrument::VERIFY_COMPLETED.name), 4);
    assert_eq!(int_value(first, Instrument::VERIFY_SUCCEEDED.name), 3);
    assert_eq!(
        int_value(first, Instrument::SERVERS_ACTIVE.name),
        FLEET_SIZE as i64
    );
}

#[test]
fn fault_retry_503_then_200_within_one_export_with_exact_totals() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for retryable in [503, 502, 504, 429] {
        let collector = FakeCollector::start(Answer::Ok);
        let (recorder, guard) = flushed_pipeline(collector.endpoint(), Duration::from_secs(2));
        record_reference_sequence(&recorder);
        collector.answer_next([Answer::Status(retryable, None)]);
        let start = Instant::now();
        let flushed = guard.force_flush();
        let took = start.elapsed();
        let gaps = gaps(&collector.attempt_times());
        eprintln!(
            "{retryable} then 200: one export in {took:?}, attempts {}, gaps {gaps:?}",
            collector.attempts()
        );
        assert!(flushed.is_ok(), "{retryable}: {flushed:?}");
        assert_eq!(collector.attempts(), 2, "{retryable}: one retry");
        // The first backoff: 100 ms ± 50 %.
        assert!(
            gaps[0] >= Duration::from_millis(45) && gaps[0] < Duration::from_millis(400),
            "{gaps:?}"
        );
        let accepted = collector.accepted();
        assert_eq!(accepted.len(), 1);
        assert_reference_totals(&accepted[0]);
        guard.shutdown().unwrap();
    }
}

#[test]
fn fault_retry_500_and_400_are_not_retried() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for fatal in [500, 400, 401, 403, 404] {
        let collector = FakeCollector::start(Answer::Status(fatal, None));
        let (recorder, guard) = flushed_pipeline(collector.endpoint(), Duration::from_secs(2));
        record_reference_sequence(&recorder);
        for export in 1..=2 {
            let start = Instant::now();
            let flushed = guard.force_flush();
            eprintln!(
                "{fatal}: export {export} failed in {:?}: {flushed:?}",
                start.elapsed()
            );
            assert!(flushed.is_err(), "{fatal}");
            assert_eq!(
                collector.attempts(),
                export,
                "{fatal}: one attempt per export"
            );
        }
        collector.set_answer(Answer::Ok);
        guard.force_flush().unwrap();
        assert_eq!(collector.attempts(), 3);
        assert_reference_totals(&collector.accepted()[0]);
        guard.shutdown().unwrap();
    }
}

#[test]
fn fault_retry_after_one_second_is_honoured_when_the_timeout_allows() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeCollector::start(Answer::Ok);
    let (recorder, guard) = flushed_pipeline(collector.endpoint(), Duration::from_secs(3));
    record_reference_sequence(&recorder);
    collector.answer_next([Answer::Status(503, Some("1"))]);
    let start = Instant::now();
    guard.force_flush().unwrap();
    let took = start.elapsed();
    let gaps = gaps(&collector.attempt_times());
    eprintln!("Retry-After: 1 under a 3 s timeout: export {took:?}, retry after {gaps:?}");
    assert_eq!(collector.attempts(), 2);
    assert!(gaps[0] >= Duration::from_millis(990), "{gaps:?}");
    assert!(gaps[0] < Duration::from_millis(1500), "{gaps:?}");
    assert_reference_totals(&collector.accepted()[0]);

    // Under a 600 ms timeout the asked-for second cannot be honoured: not
    // retried sooner than asked, the export ends at once.
    let collector = FakeCollector::start(Answer::Status(503, Some("1")));
    let (recorder, guard) = flushed_pipeline(collector.endpoint(), Duration::from_millis(600));
    record_reference_sequence(&recorder);
    let start = Instant::now();
    assert!(guard.force_flush().is_err());
    let took = start.elapsed();
    eprintln!("Retry-After: 1 under a 600 ms timeout: one attempt, export {took:?}");
    assert_eq!(collector.attempts(), 1);
    assert!(took < Duration::from_millis(300), "{took:?}");
}

#[test]
fn fault_retry_after_unusable_values_never_hold_an_export_past_its_timeout() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let timeout = Duration::from_millis(600);
    let margin = Duration::from_millis(150);
    let cases = [
        (503, "3600"),
        (429, "3600"),
        (503, "-5"),
        (503, "Wed, 21 Oct 2015 07:28:00 GMT"),
        (503, "soon"),
        (429, "1e9"),
        (503, "99999999999999999999"),
    ];
    // Side by side (each its own collector and pipeline): they mostly wait.
    std::thread::scope(|scope| {
        for (status, retry_after) in cases {
            scope.spawn(move || {
                let collector = FakeCollector::start(Answer::Status(status, Some(retry_after)));
                let (recorder, guard) = flushed_pipeline(collector.endpoint(), timeout);
                record_reference_sequence(&recorder);
                let mut longest = Duration::ZERO;
                for _ in 0..2 {
                    let start = Instant::now();
                    assert!(guard.force_flush().is_err());
                    longest = longest.max(start.elapsed());
                }
                let attempts = collector.attempts();
                eprintln!(
                    "{status} Retry-After: {retry_after:?}: 2 exports, {attempts} attempts, longest export {longest:?}"
                );
                assert!(longest <= timeout + margin, "{retry_after}: {longest:?}");
                // Fell back to the backoff (100, 200 ms ± 50 %): retried, not given up.
                assert!(attempts >= 2 * 3, "{retry_after}: {attempts} attempts");
                let _ = guard.shutdown(); // its final export is refused too
            });
        }
    });
}

#[test]
fn fault_retry_storm_of_429_and_503_costs_nothing_and_loses_nothing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    const PER_BATCH: usize = 5_000;
    let collector = FakeCollector::start(Answer::Status(503, None));
    let deadline = Duration::from_secs(2);
    let (recorder, guard) = fault_pipeline(collector.endpoint(), deadline);
    let mut batches = 0u64;
    let before = record_cost_ns(&recorder, 7, PER_BATCH);
    batches += 7;
    let rss_before = rss_bytes();
    let storm = Instant::now();
    let mut flip = false;
    while storm.elapsed() < Duration::from_secs(3) {
        record_cost_ns(&recorder, 1, PER_BATCH);
        batches += 1;
        std::thread::sleep(Duration::from_millis(20));
        flip = !flip;
        collector.set_answer(if flip {
            Answer::Status(429, Some("0"))
        } else {
            Answer::Status(503, None)
        });
    }
    let during = record_cost_ns(&recorder, 7, PER_BATCH);
    batches += 7;
    let rss_growth = rss_bytes().saturating_sub(rss_before);
    let attempts = collector.attempts();
    eprintln!(
        "429/503 storm: {attempts} refused attempts in 3 s; record cost {before:.0} ns -> {during:.0} ns; RSS growth {} KiB",
        rss_growth / 1024
    );
    assert!(collector.accepted().is_empty());
    // Every 100 ms export retries, but at most 5 attempts each.
    assert!(attempts >= 20, "{attempts}");
    assert!(attempts <= 5 * 31 + 5, "{attempts}");
    assert!(during < before * 3.0 + 2_000.0, "{before} -> {during} ns");
    assert!(rss_growth < 16 * 1024 * 1024, "{rss_growth} bytes");

    // The collector accepts again. An export under way retries the request
    // it collected before the last records (cumulative: less, never more);
    // the next one, collected after every record, holds the exact totals.
    collector.set_answer(Answer::Ok);
    let accepted = collector.wait_accepted(2, Duration::from_secs(3));
    assert!(accepted.len() >= 2, "{} accepted", accepted.len());
    let n = batches * PER_BATCH as u64;
    let counts: Vec<u64> = (accepted.iter())
        .map(|r| histogram_point(r, Instrument::ROLLOUT_DURATION.name).count)
        .collect();
    eprintln!("after the storm: accepted exports' rollout counts {counts:?}, recorded {n}");
    assert!(
        counts.windows(2).all(|w| w[0] <= w[1]) && counts[0] <= n,
        "{counts:?}"
    );
    let exact = &accepted[1];
    let per_batch_sum: f64 = (0..PER_BATCH).map(|i| 100.0 + i as f64).sum();
    let rollouts = histogram_point(exact, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(rollouts.count, n);
    assert_eq!(rollouts.sum, Some(batches as f64 * per_batch_sum));
    assert_eq!(
        int_value(exact, Instrument::VERIFY_COMPLETED.name),
        n as i64
    );
    assert_eq!(
        int_value(exact, Instrument::VERIFY_SUCCEEDED.name),
        (batches * PER_BATCH.div_ceil(2) as u64) as i64
    );

    // Shutdown during a storm: within its deadline.
    collector.set_answer(Answer::Status(503, None));
    let start = Instant::now();
    let result = guard.shutdown();
    let took = start.elapsed();
    eprintln!("shutdown during a 503 storm: {took:?}: {result:?}");
    assert!(took < deadline + Duration::from_millis(300), "{took:?}");
}

#[test]
fn fault_retry_black_hole_export_is_bounded_by_its_timeout() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = std::sync::Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let timeout = Duration::from_millis(500);
    let (recorder, guard) = OtelBuilder::new()
        .endpoint(format!("http://{addr}/v1/metrics"))
        .export_interval(Duration::from_secs(60))
        .export_timeout(timeout)
        .shutdown_timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    recorder.record_rollout_duration_ms(120.0);
    let start = Instant::now();
    let flushed = guard.force_flush();
    let took = start.elapsed();
    eprintln!("black hole: export failed after {took:?}: {flushed:?}");
    assert!(flushed.is_err());
    assert!(
        took >= timeout - Duration::from_millis(20) && took < timeout + Duration::from_millis(150),
        "{took:?}"
    );
    assert_eq!(held.lock().unwrap().len(), 1, "a timeout is not retried");
    let start = Instant::now();
    let _ = guard.shutdown();
    let took = start.elapsed();
    eprintln!("black hole: shutdown took {took:?}");
    assert!(
        took < Duration::from_millis(800) + Duration::from_millis(300),
        "{took:?}"
    );
}

#[test]
fn fault_retry_partial_success_is_logged_once() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let collector = FakeCollector::start(Answer::PartialSuccess(3, "x"));
    let (recorder, guard) = flushed_pipeline(collector.endpoint(), Duration::from_secs(2));
    record_reference_sequence(&recorder);
    for _ in 0..3 {
        guard.force_flush().unwrap();
    }
    assert_eq!(collector.attempts(), 3);
    let warnings = log.lines(log::Level::Warn);
    eprintln!("{warnings:#?}");
    let partial: Vec<_> = warnings
        .iter()
        .filter(|l| l.contains("accepted an export only in part"))
        .collect();
    assert_eq!(partial.len(), 1, "{warnings:#?}");
    assert!(
        partial[0].contains("3 data point(s) rejected (x)"),
        "{partial:?}"
    );
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    guard.shutdown().unwrap();
}

#[test]
fn fault_retry_gzip_body_is_gunzipped_by_the_collector() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for (via_env, compression) in [(false, "gzip"), (true, "gzip"), (false, "none")] {
        let collector = FakeCollector::start(Answer::Ok);
        let builder = if via_env {
            let endpoint = collector.endpoint();
            OtelBuilder::from_env_lookup(|name| match name {
                "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION" => Some("gzip".into()),
                "OTEL_EXPORTER_OTLP_COMPRESSION" => Some("none".into()),
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some(endpoint.clone()),
                _ => None,
            })
            .unwrap()
        } else {
            OtelBuilder::new()
                .endpoint(collector.endpoint())
                .compression(compression)
                .unwrap()
        };
        let (recorder, guard) = builder
            .role(Role::orchestrator())
            .export_interval(Duration::from_secs(60))
            .build()
            .unwrap();
        record_reference_sequence(&recorder);
        guard.force_flush().unwrap();
        let gzipped = compression == "gzip";
        let encoding = collector
            .last_headers()
            .into_iter()
            .find(|(k, _)| k == "content-encoding");
        eprintln!("{compression} (env: {via_env}): content-encoding {encoding:?}");
        assert_eq!(collector.gzipped(), usize::from(gzipped));
        assert_eq!(encoding.is_some(), gzipped);
        assert_reference_totals(&collector.accepted()[0]);
        guard.shutdown().unwrap();
    }
    let e = OtelBuilder::from_env_lookup(|name| {
        (name == "OTEL_EXPORTER_OTLP_COMPRESSION").then(|| "brotli".into())
    })
    .unwrap_err();
    assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_COMPRESSION");
    assert!(
        e.to_string().contains("brotli") && e.to_string().contains("gzip or none"),
        "{e}"
    );
}
