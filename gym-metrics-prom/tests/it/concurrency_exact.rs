//! Concurrency (RELIABILITY.md, case 3), Prometheus backend: 16 threads record
//! mixed rollouts and verifications while a scraper renders the exposition
//! again and again. At the end every count, sum and the success fraction are
//! exact; during the run the exported success rate never leaves `[0, 1]` and
//! the exported counts never go back to a value older than one already seen.
//!
//! `GYM_RELIABILITY_RECORDS` sets the records per thread (default 1,000,000:
//! a few seconds even in a debug build).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::exposition::parse;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::mixed_records::{record_mixed, records_per_thread, totals, THREADS};

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Exported {
    completed: f64,
    succeeded: f64,
    rate: Option<f64>,
    rollout_count: f64,
    rollout_sum: f64,
    verify_count: f64,
    verify_sum: f64,
}

fn exported(text: &str) -> Exported {
    let mut e = Exported::default();
    for family in parse(text).into_values() {
        for ((name, labels), v) in family.samples {
            if labels.contains_key("le") {
                continue;
            }
            match name.as_str() {
                "gym_verify_completed_total" => e.completed = v,
                "gym_verify_succeeded_total" => e.succeeded = v,
                "gym_verify_success_rate" => e.rate = Some(v),
                "gym_rollout_duration_ms_milliseconds_count" => e.rollout_count = v,
                "gym_rollout_duration_ms_milliseconds_sum" => e.rollout_sum = v,
                "gym_verify_duration_ms_milliseconds_count" => e.verify_count = v,
                "gym_verify_duration_ms_milliseconds_sum" => e.verify_sum = v,
                _ => {}
            }
        }
    }
    e
}

#[test]
fn sixteen_threads_of_mixed_records_are_exact_and_the_rate_never_lies() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let per_thread = records_per_thread("GYM_RELIABILITY_RECORDS");
    let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let scrapes = std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                let recorder = recorder.clone();
                // Mixed: 1 in 4 a rollout, else a verification, 2 in 3 of those successful.
                s.spawn(move || record_mixed(&recorder, t, per_thread))
            })
            .collect();
        let scraper = s.spawn(|| {
            let mut previous = Exported::default();
            let mut scrapes = 0u64;
            // Bounded: stops when the writers are done, or after 10 minutes whatever happens.
            while !done.load(Ordering::Acquire) && started.elapsed() < Duration::from_secs(600) {
                let now = exported(&handle.render());
                if let Some(rate) = now.rate {
                    assert!((0.0..=1.0).contains(&rate), "rate {rate} out of [0, 1]");
                    assert!(now.succeeded <= now.completed, "{now:?}");
                }
                assert!(
                    now.completed >= previous.completed,
                    "{now:?} after {previous:?}"
                );
                assert!(
                    now.succeeded >= previous.succeeded,
                    "{now:?} after {previous:?}"
                );
                assert!(
                    now.rollout_count >= previous.rollout_count,
                    "{now:?} after {previous:?}"
                );
                assert!(
                    now.verify_sum >= previous.verify_sum,
                    "{now:?} after {previous:?}"
                );
                previous = now;
                scrapes += 1;
            }
            scrapes
        });
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
        scraper.join().unwrap()
    });
    let elapsed = started.elapsed();

    // The exact expectation, computed the same way.
    let totals = totals(per_thread);
    let mut want = Exported {
        completed: totals.verifies as f64,
        succeeded: totals.succeeded as f64,
        rate: None,
        rollout_count: totals.rollouts as f64,
        rollout_sum: totals.rollout_sum,
        verify_count: totals.verifies as f64,
        verify_sum: totals.verify_sum,
    };
    want.rate = Some(want.succeeded / want.completed);
    let got = exported(&handle.render());
    eprintln!(
        "concurrency: {THREADS} x {per_thread} records in {elapsed:?}, {scrapes} scrapes meanwhile; {got:?}"
    );
    assert!(scrapes > 0, "the scraper never ran");
    assert_eq!(got, want);
}
