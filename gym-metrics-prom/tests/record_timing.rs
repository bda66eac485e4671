//! A rough ns-per-record measurement (not a benchmark: that is a later issue).
//! Run: `cargo test -p gym-metrics-prom --release --test record_timing -- --ignored --nocapture`
//!
//! Time is each recording thread's on-CPU time (from /proc/thread-self/schedstat),
//! so that other processes on a busy machine do not inflate it.

use std::hint::black_box;

use gym_metrics_api::Recorder;
use gym_metrics_prom::PrometheusBuilder;

const PER_THREAD: u64 = 5_000_000;

/// This thread's on-CPU nanoseconds.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Mean on-CPU ns per call of `record` over `threads` concurrent threads.
fn measure(threads: u64, record: impl Fn(u64) + Sync) -> f64 {
    let total: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let record = &record;
                s.spawn(move || {
                    let start = cpu_ns();
                    for i in 0..PER_THREAD {
                        record(black_box((i & 8191) + t));
                    }
                    cpu_ns() - start
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    total as f64 / (threads * PER_THREAD) as f64
}

#[test]
#[ignore = "a measurement; run in release with --ignored --nocapture"]
fn ns_per_record() {
    for threads in [1, 2] {
        let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
        let rollout = measure(threads, |v| recorder.record_rollout_duration(v as f64));
        let expected = format!(
            "gym_rollout_duration_ms_milliseconds_count{{otel_scope_name=\"gym-metrics\",otel_scope_version=\"{}\"}} {}\n",
            gym_metrics_prom::SCOPE_VERSION,
            threads * PER_THREAD
        );
        assert!(handle.render().contains(&expected), "{}", handle.render());
        let verify = measure(threads, |v| recorder.record_verify(v as f64, v < 2500));

        let theirs = prometheus::Histogram::with_opts(
            prometheus::HistogramOpts::new("h", "h")
                .buckets(gym_metrics_api::catalogue::DEFAULT_DURATION_BOUNDARIES_MS.to_vec()),
        )
        .unwrap();
        let prom = measure(threads, |v| theirs.observe(v as f64));
        assert_eq!(theirs.get_sample_count(), threads * PER_THREAD);
        println!(
            "{threads} thread(s), on-CPU ns per record: rollout {rollout:.2}, verify (histogram + tally) {verify:.2}; \
             prometheus::Histogram::observe {prom:.2}"
        );
    }
}
