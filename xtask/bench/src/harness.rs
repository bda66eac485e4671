//! The measurement: short timed runs of every candidate, interleaved round by
//! round, on one or more threads recording at once; the best and the median
//! run per candidate.
//!
//! Interleaving puts every candidate under the same background load, so the
//! ratios hold on a busy machine even when absolute times drift.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{json, Value};

/// A value sequence every candidate records: `i & 8191` milliseconds, spread
/// over the default buckets 100 ms .. 10 s (and beyond the first ones).
#[inline(always)]
pub fn value(i: u64) -> u64 {
    black_box(i & 8191)
}

/// Times `per_run` calls of `record`; nanoseconds per call.
#[inline(always)]
pub fn timed_loop(per_run: u64, record: &impl Fn(u64)) -> f64 {
    let started = Instant::now();
    for i in 0..per_run {
        record(value(i));
    }
    started.elapsed().as_nanos() as f64 / per_run as f64
}

/// One row of a table: a name and a monomorphised timed loop (the dynamic
/// call happens once per run, not once per record).
pub struct Candidate<'a> {
    /// The row's name, as the report prints it.
    pub name: &'static str,
    run: Box<dyn Fn(u64) + Sync + 'a>,
}

impl<'a> Candidate<'a> {
    /// A candidate whose record call is `record(value)`.
    pub fn new(name: &'static str, record: impl Fn(u64) + Sync + 'a) -> Self {
        Self {
            name,
            run: Box::new(move |per_run| {
                for i in 0..per_run {
                    record(value(i));
                }
            }),
        }
    }
}

/// A measured row: nanoseconds per call, the best and the median run (of
/// the slowest thread, with more than one).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The candidate's name.
    pub name: &'static str,
    /// Threads recording at once.
    pub threads: usize,
    /// The fastest run, ns per call.
    pub best_ns: f64,
    /// The median run, ns per call.
    pub median_ns: f64,
    /// Runs kept: with several threads, only runs during which every
    /// thread was recording for at least 90% of the run count.
    pub runs_kept: usize,
    /// Runs made.
    pub runs: usize,
}

impl Figure {
    /// The row as JSON, for `cargo xtask bench`.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "threads": self.threads,
            "best_ns": self.best_ns,
            "median_ns": self.median_ns,
            "runs_kept": self.runs_kept,
            "runs": self.runs,
        })
    }
}

/// A barrier whose waiters spin: every thread passes only while all are on
/// a CPU, so timed runs start together even on a loaded machine (a futex
/// barrier's wake-up latency is as long as a run).
struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(threads: usize) -> Self {
        Self {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Release);
            self.generation.fetch_add(1, Ordering::AcqRel);
        } else {
            while self.generation.load(Ordering::Acquire) == generation {
                std::hint::spin_loop();
            }
        }
    }
}

/// One round: per candidate, per thread, the run's (start, end).
type RoundSpans = Vec<Vec<(Instant, Instant)>>;

/// Whether a round's spans (one per thread) overlapped for at least 90% of
/// the slowest; and that slowest duration in ns.
fn overlapped(spans: &[(Instant, Instant)]) -> (bool, f64) {
    let slowest = spans
        .iter()
        .map(|(s, e)| e.duration_since(*s).as_nanos() as f64)
        .fold(0.0, f64::max);
    let start = spans.iter().map(|(s, _)| *s).max();
    let end = spans.iter().map(|(_, e)| *e).min();
    let overlap = match (start, end) {
        (Some(s), Some(e)) if e > s => e.duration_since(s).as_nanos() as f64,
        _ => 0.0,
    };
    (spans.len() == 1 || overlap >= 0.9 * slowest, slowest)
}

/// Runs every candidate, interleaved, each run `per_run` calls, on
/// `threads` threads that start each run together, until every candidate
/// has `rounds` runs. With several threads a run counts only if the threads
/// overlapped for at least 90% of it (a descheduled thread would make it a
/// single-threaded run), so rounds go on until each candidate has `rounds`
/// such runs or 20 times as many rounds were made.
pub fn measure(
    threads: usize,
    rounds: usize,
    per_run: u64,
    candidates: &[Candidate<'_>],
) -> Vec<Figure> {
    let max_rounds = if threads > 1 { rounds * 20 } else { rounds };
    let barrier = SpinBarrier::new(threads);
    let spans: Mutex<Vec<RoundSpans>> = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for thread in 0..threads {
            let (barrier, spans, done) = (&barrier, &spans, &done);
            s.spawn(move || {
                // Warm-up: shards registered, caches and predictors primed.
                for c in candidates {
                    (c.run)(per_run.min(1_000));
                }
                for round in 0..max_rounds {
                    let mut mine = Vec::with_capacity(candidates.len());
                    for c in candidates {
                        barrier.wait();
                        let start = Instant::now();
                        (c.run)(per_run);
                        mine.push((start, Instant::now()));
                    }
                    {
                        let mut all = spans.lock().unwrap_or_else(|p| p.into_inner());
                        if all.len() <= round {
                            all.push(vec![Vec::new(); candidates.len()]);
                        }
                        for (k, span) in mine.into_iter().enumerate() {
                            all[round][k].push(span);
                        }
                    }
                    barrier.wait();
                    if thread == 0 {
                        let all = spans.lock().unwrap_or_else(|p| p.into_inner());
                        let fewest = (0..candidates.len())
                            .map(|k| all.iter().filter(|r| overlapped(&r[k]).0).count())
                            .min()
                            .unwrap_or(0);
                        done.store(fewest >= rounds, Ordering::Release);
                    }
                    barrier.wait();
                    if done.load(Ordering::Acquire) {
                        break;
                    }
                }
            });
        }
    });
    let all = spans.into_inner().unwrap_or_else(|p| p.into_inner());
    candidates
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut kept = Vec::new();
            let mut every = Vec::new();
            for round in &all {
                let (ok, slowest) = overlapped(&round[k]);
                let ns = slowest / per_run as f64;
                every.push(ns);
                if ok {
                    kept.push(ns);
                }
            }
            let (best_ns, median_ns) = if kept.is_empty() {
                best_and_median(&every)
            } else {
                best_and_median(&kept)
            };
            Figure {
                name: c.name,
                threads,
                best_ns,
                median_ns,
                runs_kept: kept.len(),
                runs: every.len(),
            }
        })
        .collect()
}

/// The smallest and the median of `runs` (0 for none).
pub fn best_and_median(runs: &[f64]) -> (f64, f64) {
    let mut sorted = runs.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.first() {
        Some(&best) => (best, sorted[sorted.len() / 2]),
        None => (0.0, 0.0),
    }
}

/// Prints `figures` as a plain table on standard output.
pub fn print(title: &str, figures: &[Figure]) {
    println!("{title}");
    for f in figures {
        println!(
            "  {:<56} {} thread(s)  best {:>9.2} ns  median {:>9.2} ns  ({} of {} runs)",
            f.name, f.threads, f.best_ns, f.median_ns, f.runs_kept, f.runs
        );
    }
}
