//! A loop of N record calls for callgrind to count instructions in.
//!
//! `callgrind_loop <empty|duration|rollout|verify|metrics> [N] [prom]`: `cargo xtask bench`
//! runs it under `valgrind --tool=callgrind --toggle-collect=gym_bench_<mode>_loop`,
//! so only the loop's own instructions count. Built normally nothing is
//! installed (the facade's load and branch), or with a third argument `prom`
//! the Prometheus backend is (the record path the 50-instruction
//! target is about; the loop calls are counted, the thread's first record,
//! which creates its shard, is made before the loop); built with
//! `--features noop` the no-op backend is installed and every record call
//! compiles to nothing.
//!
//! A fourth argument `time` runs the loop [`TIMED_RUNS`] times and prints
//! the fastest run's wall time per call in nanoseconds: `cargo xtask bench` runs it once per process, several
//! processes, to show how much a record's time varies between processes.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use gym_metrics_api::{record_rollout_duration, record_verify};

/// How many times `time` runs the loop in one process.
const TIMED_RUNS: usize = 5;

/// The loop without a record call: the loop counter made opaque, as the
/// record loops make it, so that no loop is optimised away.
// SAFETY (each `no_mangle` here): the names are this binary's own, unique
// symbols that callgrind's `--toggle-collect` finds; nothing else defines them.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn gym_bench_empty_loop(n: u64) {
    for i in 0..n {
        black_box(i);
    }
}

/// The `Duration` the record loops pass, built N times and nothing else:
/// what the record loops cost over it is the record call itself.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn gym_bench_duration_loop(n: u64) {
    for i in 0..n {
        black_box(Duration::from_millis(black_box(i)));
    }
}

/// A `metrics::counter!` increment N times: with no `metrics` recorder in
/// the process (nothing installed, or the noop backend, which installs
/// none), what the `metrics` crate itself costs with no recorder.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn gym_bench_metrics_loop(n: u64) {
    for i in 0..n {
        metrics::counter!("app.jobs.done").increment(black_box(i));
    }
}

/// `record_rollout_duration` N times.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn gym_bench_rollout_loop(n: u64) {
    for i in 0..n {
        record_rollout_duration(Duration::from_millis(black_box(i)));
    }
}

/// `record_verify` N times (the outcome a constant).
#[unsafe(no_mangle)]
#[inline(never)]
pub fn gym_bench_verify_loop(n: u64) {
    for i in 0..n {
        record_verify(Duration::from_millis(black_box(i)), true);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = match args.get(1).map(|s| s.parse()) {
        None => 1_000_000,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!(
                "usage: callgrind_loop <empty|duration|rollout|verify|metrics> [N] [prom] [time]"
            );
            return ExitCode::from(2);
        }
    };
    // An application links `install`; so must this program, or the
    // optimiser proves the recorder pointer is never written and folds the
    // facade's load and branch away (the count would then be the empty
    // loop's, flattering "nothing installed"). Never taken when counting.
    #[cfg(not(feature = "noop"))]
    if std::env::var_os("GYM_BENCH_INSTALL").is_some() {
        let role = gym_metrics_api::Role::orchestrator();
        if let Err(e) = gym_metrics_api::install(gym_metrics_api::backend::NoopRecorder::new(role))
        {
            eprintln!("callgrind_loop: {e}");
        }
    }
    // The Prometheus backend installed, no listener: the record path only.
    #[cfg(not(feature = "noop"))]
    let _prom = if args.get(2).map(String::as_str) == Some("prom") {
        match gym_metrics_prom::PrometheusBuilder::new().install_recorder() {
            Ok(installed) => {
                // The first record of a thread creates its shards: not the
                // steady state being counted.
                record_rollout_duration(Duration::from_millis(1));
                record_verify(Duration::from_millis(1), true);
                Some(installed)
            }
            Err(e) => {
                eprintln!("callgrind_loop: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    #[cfg(feature = "noop")]
    let _guard = match gym_metrics_noop::NoopBuilder::new().install() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("callgrind_loop: {e}");
            return ExitCode::FAILURE;
        }
    };
    let run: fn(u64) = match args.first().map(String::as_str) {
        Some("empty") => gym_bench_empty_loop,
        Some("duration") => gym_bench_duration_loop,
        Some("metrics") => gym_bench_metrics_loop,
        Some("rollout") => gym_bench_rollout_loop,
        Some("verify") => gym_bench_verify_loop,
        _ => {
            eprintln!(
                "usage: callgrind_loop <empty|duration|rollout|verify|metrics> [N] [prom] [time]"
            );
            return ExitCode::from(2);
        }
    };
    if args.get(3).map(String::as_str) != Some("time") {
        run(n);
        return ExitCode::SUCCESS;
    }
    // The fastest of a few runs: what this process settles at, without
    // the moments the shared machine took from it.
    let fastest = (0..TIMED_RUNS)
        .map(|_| {
            let started = std::time::Instant::now();
            run(n);
            started.elapsed().as_nanos() as f64 / n.max(1) as f64
        })
        .fold(f64::INFINITY, f64::min);
    println!("{fastest}");
    ExitCode::SUCCESS
}
