//! The measurement, on criterion: the shared configuration, the value every
//! candidate records, the pair of threads the 2-thread figures come from,
//! and the rows read back from criterion's own estimates for
//! `cargo xtask bench`.
//!
//! A single-threaded candidate is a plain `Bencher::iter` closure recording
//! [`value`]s. A 2-thread candidate is `Bencher::iter_custom` over a
//! [`Pair`]: two persistent threads that have each recorded a few values
//! already (so per-thread shard registration is outside the timed span),
//! start every sample together on a spin barrier and record `iters` values
//! each; the sample's time is the slower thread's.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use criterion::Criterion;
use serde_json::{json, Value};

use crate::Mode;

/// A value sequence every candidate records: `i & 8191` milliseconds, spread
/// over the default buckets 100 ms .. 10 s (and beyond the first ones).
#[inline(always)]
pub fn value(i: u64) -> u64 {
    black_box(i & 8191)
}

/// Warm-up time of every benchmark.
pub const WARM_UP: Duration = Duration::from_secs(1);
/// Measurement time of every benchmark.
pub const MEASUREMENT: Duration = Duration::from_secs(3);
/// Samples per benchmark.
pub const SAMPLES: usize = 50;

/// When this process made its [`criterion`]: estimates written before are
/// an earlier run's.
static STARTED: OnceLock<SystemTime> = OnceLock::new();

/// The criterion every bench binary runs its groups with: modest times so
/// that `cargo xtask bench` stays within minutes, then the command line
/// (`--bench` for timing, none or `--test` for one untimed run each).
pub fn criterion() -> Criterion {
    STARTED.get_or_init(SystemTime::now);
    Criterion::default()
        .warm_up_time(WARM_UP)
        .measurement_time(MEASUREMENT)
        .sample_size(SAMPLES)
        .configure_from_args()
}

/// Where criterion writes its results, resolved as criterion 0.8 does
/// (`default_output_directory` in its `lib.rs`): `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else the target directory `cargo
/// metadata` reports (through `$CARGO`, which cargo sets for a bench),
/// else `target/criterion`. Relative paths are relative to this process's
/// directory, as they are for criterion in the same process.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let metadata = std::env::var_os("CARGO").and_then(|cargo| {
        let output = std::process::Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .ok()?;
        let v: Value = serde_json::from_slice(&output.stdout).ok()?;
        Some(PathBuf::from(v.get("target_directory")?.as_str()?))
    });
    metadata.map_or_else(
        || PathBuf::from("target/criterion"),
        |t| t.join("criterion"),
    )
}

/// Criterion's directory name for a group or benchmark name
/// (`make_filename_safe` in criterion 0.8's `report.rs`, Unix).
fn filename_safe(name: &str) -> String {
    let mut safe: String = name
        .chars()
        .map(|c| match c {
            '?' | '"' | '/' | '\\' | '*' | '<' | '>' | ':' | '|' | '^' => '_',
            c => c,
        })
        .collect();
    let mut end = safe.len().min(64);
    while !safe.is_char_boundary(end) {
        end -= 1;
    }
    safe.truncate(end);
    safe
}

/// Criterion's directory of the benchmark `name` in `group`.
pub fn bench_dir(group: &str, name: &str) -> PathBuf {
    criterion_dir()
        .join(filename_safe(group))
        .join(filename_safe(name))
}

/// A median and its confidence interval, ns (per call, or per whatever one
/// iteration of the benchmark is).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The median of the samples' per-iteration times.
    pub median_ns: f64,
    /// The lower bound of its confidence interval (95% by default).
    pub low_ns: f64,
    /// The upper bound.
    pub high_ns: f64,
}

/// Reads `median` from criterion's `<dir>/new/estimates.json`, provided
/// this process wrote it (a benchmark that did not run this time must not
/// pass off an earlier run's figures as new).
pub fn read_estimate(dir: &Path) -> Result<Estimate, String> {
    let path = dir.join("new").join("estimates.json");
    let written = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if STARTED.get().is_some_and(|started| written < *started) {
        return Err(format!("{} is from an earlier run", path.display()));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let num = |pointer: &str| {
        v.pointer(pointer)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("{}: no {pointer}", path.display()))
    };
    Ok(Estimate {
        median_ns: num("/median/point_estimate")?,
        low_ns: num("/median/confidence_interval/lower_bound")?,
        high_ns: num("/median/confidence_interval/upper_bound")?,
    })
}

/// A row of a table: the candidate, its thread count and, after a timing
/// run, criterion's estimate (none in quick mode).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The candidate's name, as the report prints it.
    pub name: &'static str,
    /// Threads recording at once.
    pub threads: usize,
    /// The figures, if this run measured them.
    pub estimate: Option<Estimate>,
}

impl Figure {
    /// The row of `name` in criterion group `group`: read back from
    /// criterion's results in timing mode, figures absent in quick mode.
    /// A timing run whose estimates are missing (a benchmark filtered out
    /// on the command line) also leaves them absent, with a warning.
    pub fn read(mode: Mode, group: &str, name: &'static str, threads: usize) -> Self {
        let estimate = match mode {
            Mode::Quick => None,
            Mode::Timing => match read_estimate(&bench_dir(group, name)) {
                Ok(e) => Some(e),
                Err(e) => {
                    eprintln!("gym-bench: no estimate for {group}/{name}: {e}");
                    None
                }
            },
        };
        Self {
            name,
            threads,
            estimate,
        }
    }

    /// The row as JSON, for `cargo xtask bench`: `{name, threads}` and,
    /// when measured, `median_ns`, `low_ns`, `high_ns`.
    pub fn to_json(&self) -> Value {
        let mut row = json!({ "name": self.name, "threads": self.threads });
        if let (Some(e), Some(map)) = (self.estimate, row.as_object_mut()) {
            map.insert("median_ns".into(), json!(e.median_ns));
            map.insert("low_ns".into(), json!(e.low_ns));
            map.insert("high_ns".into(), json!(e.high_ns));
        }
        row
    }
}

/// The rows of `names` in `group`, as a JSON array.
pub fn rows(mode: Mode, group: &str, threads: usize, names: &[&'static str]) -> Value {
    let figures: Vec<Figure> = names
        .iter()
        .map(|name| Figure::read(mode, group, name, threads))
        .collect();
    print(group, &figures);
    Value::Array(figures.iter().map(Figure::to_json).collect())
}

/// Prints `figures` as a plain table on standard output.
pub fn print(title: &str, figures: &[Figure]) {
    println!("{title}");
    for f in figures {
        match f.estimate {
            Some(e) => println!(
                "  {:<60} {} thread(s)  median {:>10.2} ns  [{:.2} .. {:.2}]",
                f.name, f.threads, e.median_ns, e.low_ns, e.high_ns
            ),
            None => println!("  {:<60} {} thread(s)  (not timed)", f.name, f.threads),
        }
    }
}

/// A barrier whose waiters spin: every thread passes only while all are on
/// a CPU, so timed spans start together even on a loaded machine (a futex
/// barrier's wake-up latency is longer than a short sample).
/// A thread that ends (its record call panicked) abandons the barrier, so
/// the other is not left spinning for it forever.
struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    abandoned: AtomicBool,
}

impl SpinBarrier {
    fn new(threads: usize) -> Self {
        Self {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            abandoned: AtomicBool::new(false),
        }
    }

    fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Release);
            self.generation.fetch_add(1, Ordering::AcqRel);
        } else {
            while self.generation.load(Ordering::Acquire) == generation
                && !self.abandoned.load(Ordering::Acquire)
            {
                std::hint::spin_loop();
            }
        }
    }
}

/// Values each thread of a [`Pair`] records before its first timed span.
pub const PAIR_WARM_UP: u64 = 1_000;

/// Two persistent threads recording into the same instrument; see
/// [`Pair::with`].
pub struct Pair {
    jobs: Vec<Sender<u64>>,
    done: Receiver<Duration>,
    records: u64,
}

impl Pair {
    /// Starts two threads that each record [`PAIR_WARM_UP`] values with
    /// `record`, then wait (blocked, not spinning) for [`Pair::time`];
    /// runs `body` with the pair and stops the threads after it.
    pub fn with<F: Fn(u64) + Sync, R>(record: F, body: impl FnOnce(&mut Pair) -> R) -> R {
        let barrier = SpinBarrier::new(2);
        let (done_tx, done) = mpsc::channel();
        std::thread::scope(|s| {
            let mut jobs = Vec::with_capacity(2);
            for _ in 0..2 {
                let (job_tx, job_rx) = mpsc::channel::<u64>();
                jobs.push(job_tx);
                let (record, barrier, done) = (&record, &barrier, done_tx.clone());
                s.spawn(move || {
                    struct Leave<'a>(&'a SpinBarrier);
                    impl Drop for Leave<'_> {
                        fn drop(&mut self) {
                            self.0.abandon();
                        }
                    }
                    let _leave = Leave(barrier);
                    for i in 0..PAIR_WARM_UP {
                        record(value(i));
                    }
                    for iters in job_rx {
                        barrier.wait();
                        let started = Instant::now();
                        for i in 0..iters {
                            record(value(i));
                        }
                        if done.send(started.elapsed()).is_err() {
                            break;
                        }
                    }
                });
            }
            let mut pair = Pair {
                jobs,
                done,
                records: 2 * PAIR_WARM_UP,
            };
            // Dropping the pair closes the job channels: the threads end
            // and the scope joins them.
            body(&mut pair)
        })
    }

    /// One sample for `Bencher::iter_custom`: both threads record `iters`
    /// values, starting together; the slower thread's elapsed time.
    ///
    /// # Panics
    /// A thread of the pair died (its record call panicked).
    pub fn time(&mut self, iters: u64) -> Duration {
        for job in &self.jobs {
            job.send(iters)
                .expect("a recording thread of the pair died");
        }
        let a = self
            .done
            .recv()
            .expect("a recording thread of the pair died");
        let b = self
            .done
            .recv()
            .expect("a recording thread of the pair died");
        self.records += 2 * iters;
        a.max(b)
    }

    /// Records made by both threads so far, warm-up included.
    pub fn records(&self) -> u64 {
        self.records
    }
}

/// One table: a criterion group whose benchmarks all run on the same
/// number of threads, and the names it ran, to read back afterwards.
pub struct Table<'c> {
    group: criterion::BenchmarkGroup<'c, criterion::measurement::WallTime>,
    group_name: String,
    threads: usize,
    names: Vec<&'static str>,
}

impl<'c> Table<'c> {
    /// The group `group_name` on `threads` threads (1 or 2).
    pub fn new(c: &'c mut Criterion, group_name: &str, threads: usize) -> Self {
        assert!(
            threads == 1 || threads == 2,
            "1 or 2 threads, not {threads}"
        );
        Self {
            group: c.benchmark_group(group_name),
            group_name: group_name.to_string(),
            threads,
            names: Vec::new(),
        }
    }

    /// Criterion's group, to change its configuration.
    pub fn group(
        &mut self,
    ) -> &mut criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
        &mut self.group
    }

    /// Benchmarks `record(value(i))` as candidate `name`: a plain
    /// `Bencher::iter` with 1 thread, [`Pair`] samples with 2. Returns the
    /// records made (warm-up included), for the bench's own checks.
    pub fn run(&mut self, name: &'static str, record: impl Fn(u64) + Sync) -> u64 {
        self.names.push(name);
        if self.threads == 1 {
            let mut calls = 0u64;
            self.group.bench_function(name, |b| {
                b.iter(|| {
                    calls += 1;
                    record(value(calls))
                })
            });
            calls
        } else {
            let group = &mut self.group;
            Pair::with(record, |pair| {
                group.bench_function(name, |b| b.iter_custom(|iters| pair.time(iters)));
                pair.records()
            })
        }
    }

    /// Benchmarks `routine` as candidate `name`, however it times itself.
    pub fn run_with(
        &mut self,
        name: &'static str,
        routine: impl FnMut(&mut criterion::Bencher<'_, criterion::measurement::WallTime>),
    ) {
        self.names.push(name);
        self.group.bench_function(name, routine);
    }

    /// Ends the group; its rows (see [`rows`]), printed.
    pub fn finish(self, mode: Mode) -> Value {
        self.group.finish();
        rows(mode, &self.group_name, self.threads, &self.names)
    }
}

/// Passes over every record-path table. Criterion measures candidates one
/// after the other, so whatever else the shared machine does during one
/// candidate's 4 s lands on that candidate alone: single runs here put the
/// same call at 17 ns and, minutes later, at 35 ns, and a lock two threads
/// fight over (the OpenTelemetry SDK's histogram) falls into faster or
/// slower hand-over patterns for seconds at a time (90 ns against 300 ns).
/// Alternating passes put every candidate under each condition; the median
/// of the passes is what the report uses.
pub const PASSES: usize = 3;

/// Passes in `mode`: [`PASSES`] when timing, one untimed run in quick mode.
///
/// ```
/// use gym_bench::{harness, Mode};
/// assert_eq!(harness::passes(Mode::Quick), 1);
/// assert_eq!(harness::passes(Mode::Timing), harness::PASSES);
/// ```
pub fn passes(mode: Mode) -> usize {
    match mode {
        Mode::Timing => PASSES,
        Mode::Quick => 1,
    }
}

/// Criterion's group name of `table` in pass `pass` of `passes`.
///
/// ```
/// assert_eq!(gym_bench::harness::pass_group("record_prom threads_1", 2, 3), "record_prom threads_1 pass 2");
/// assert_eq!(gym_bench::harness::pass_group("record_prom threads_1", 1, 1), "record_prom threads_1");
/// ```
pub fn pass_group(table: &str, pass: usize, passes: usize) -> String {
    if passes == 1 {
        table.to_string()
    } else {
        format!("{table} pass {pass}")
    }
}

/// The table `table` on `threads` threads, filled by `fill` once per pass
/// ([`passes`] in `mode`, each its own criterion group, see [`pass_group`]),
/// as one set of rows ([`combine_passes`]).
pub fn table_in_passes(
    c: &mut Criterion,
    mode: Mode,
    table: &str,
    threads: usize,
    mut fill: impl FnMut(&mut Table<'_>),
) -> Value {
    let passes = passes(mode);
    let tables: Vec<Value> = (1..=passes)
        .map(|pass| {
            let mut t = Table::new(c, &pass_group(table, pass, passes), threads);
            fill(&mut t);
            t.finish(mode)
        })
        .collect();
    combine_passes(&tables)
}

/// One table measured as several passes (JSON arrays of rows, as
/// [`Table::finish`] returns them), as one: per candidate, the median of
/// the passes' medians, and the widest interval (lowest low, highest high).
/// Rows without figures (quick mode) stay without.
///
/// ```
/// use gym_bench::harness::combine_passes;
/// use serde_json::json;
/// let row = |m: f64| json!([{ "name": "a", "threads": 2, "median_ns": m, "low_ns": m - 1.0, "high_ns": m + 1.0 }]);
/// let both = combine_passes(&[row(90.0), row(300.0), row(120.0)]);
/// assert_eq!(both[0]["median_ns"], json!(120.0));
/// assert_eq!((both[0]["low_ns"].clone(), both[0]["high_ns"].clone()), (json!(89.0), json!(301.0)));
/// ```
pub fn combine_passes(passes: &[Value]) -> Value {
    let Some(first) = passes.first().and_then(Value::as_array) else {
        return Value::Array(Vec::new());
    };
    let rows = first
        .iter()
        .map(|row| {
            let name = row.get("name");
            let same: Vec<&Value> = passes
                .iter()
                .filter_map(Value::as_array)
                .filter_map(|rows| rows.iter().find(|r| r.get("name") == name))
                .collect();
            let figures = |key: &str| -> Vec<f64> {
                same.iter()
                    .filter_map(|r| r.get(key).and_then(Value::as_f64))
                    .collect()
            };
            let mut medians = figures("median_ns");
            if medians.len() != same.len() || medians.is_empty() {
                return row.clone();
            }
            medians.sort_by(f64::total_cmp);
            let mut combined = row.clone();
            if let Some(map) = combined.as_object_mut() {
                map.insert("median_ns".into(), json!(medians[medians.len() / 2]));
                let low = figures("low_ns").into_iter().fold(f64::INFINITY, f64::min);
                let high = figures("high_ns").into_iter().fold(0.0, f64::max);
                map.insert("low_ns".into(), json!(low));
                map.insert("high_ns".into(), json!(high));
                map.insert("passes".into(), json!(medians));
            }
            combined
        })
        .collect();
    Value::Array(rows)
}
