//! A rough ns-per-record measurement (not a benchmark: that is a later issue).
//! Run: `cargo test -p gym-metrics-prom --release --test record_timing -- --ignored --nocapture`
//!
//! Each figure is the minimum over many short interleaved runs, so that other
//! processes on a busy machine inflate it as little as possible. With two
//! threads, both record at once (a barrier starts each round).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use gym_metrics_api::Recorder;
use gym_metrics_prom::PrometheusBuilder;

const PER_RUN: u64 = 20_000;
const ROUNDS: usize = 300;

#[inline(always)]
fn run(f: &impl Fn(u64)) -> f64 {
    let started = Instant::now();
    for i in 0..PER_RUN {
        f(black_box(i & 8191));
    }
    started.elapsed().as_nanos() as f64 / PER_RUN as f64
}

/// (best, median) ns per call for each of three candidates, `threads`
/// threads recording at once; the worst thread's figure.
fn measure(
    threads: usize,
    a: &(impl Fn(u64) + Sync),
    b: &(impl Fn(u64) + Sync),
    c: &(impl Fn(u64) + Sync),
) -> [(f64, f64); 3] {
    let barrier = Barrier::new(threads);
    let per_thread: Vec<[Vec<f64>; 3]> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut runs: [Vec<f64>; 3] = Default::default();
                    for _ in 0..ROUNDS {
                        barrier.wait();
                        runs[0].push(run(a));
                        barrier.wait();
                        runs[1].push(run(b));
                        barrier.wait();
                        runs[2].push(run(c));
                    }
                    runs
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    std::array::from_fn(|candidate| {
        per_thread
            .iter()
            .map(|t| {
                let mut runs = t[candidate].clone();
                runs.sort_by(f64::total_cmp);
                (runs[0], runs[runs.len() / 2])
            })
            .fold((0.0, 0.0), |(b, m), (tb, tm)| {
                (f64::max(b, tb), f64::max(m, tm))
            })
    })
}

#[test]
#[ignore = "a measurement; run in release with --ignored --nocapture"]
fn ns_per_record() {
    for threads in [1, 2] {
        let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
        let theirs = prometheus::Histogram::with_opts(
            prometheus::HistogramOpts::new("h", "h")
                .buckets(gym_metrics_api::catalogue::DEFAULT_DURATION_BOUNDARIES_MS.to_vec()),
        )
        .unwrap();
        let rollout = |v: u64| recorder.record_rollout_duration(v as f64);
        let verify = |v: u64| recorder.record_verify(v as f64, v < 2500);
        let observe = |v: u64| theirs.observe(v as f64);
        let [r, v, o] = measure(threads, &rollout, &verify, &observe);

        // Every record counted, none lost, whatever the threads did.
        let records = threads as u64 * ROUNDS as u64 * PER_RUN;
        let expected = format!(
            "gym_rollout_duration_ms_milliseconds_count{{otel_scope_name=\"gym-metrics\",otel_scope_version=\"{}\"}} {records}\n",
            gym_metrics_prom::SCOPE_VERSION,
        );
        assert!(handle.render().contains(&expected), "{}", handle.render());
        assert_eq!(theirs.get_sample_count(), records);
        println!(
            "{threads} thread(s), ns per record (best/median run of the slower thread): \
             rollout {:.2}/{:.2}, verify (histogram + success count) {:.2}/{:.2}; \
             prometheus::Histogram::observe {:.2}/{:.2}",
            r.0, r.1, v.0, v.1, o.0, o.1
        );
    }
}
