//! # gym-bench
//!
//! The benchmarks of gym-metrics beside the libraries a user would otherwise
//! pick, timed with criterion: every candidate of a table runs in the same
//! process, one after the other, and the tables compare ratios of criterion's
//! medians. `cargo xtask bench` runs them all and writes `BENCHMARKS.md`.
//!
//! Every bench binary has two modes, criterion's own:
//!
//! - timing (`cargo bench -p gym-bench`): criterion warms up, samples and
//!   writes its estimates; the bench reads them back (median and its
//!   confidence interval), prints them and, when `GYM_BENCH_OUT` names a
//!   directory, writes them there as JSON;
//! - quick (`cargo test -p gym-bench --benches`, or `cargo bench -- --test`):
//!   criterion runs each benchmark once, untimed, so the benchmarks cannot
//!   rot; the JSON rows then carry no figures.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

pub mod cpu_time;
pub mod harness;
pub mod http_peers;
pub mod mode;
pub mod otlp_sink;
pub mod output;
pub mod peers;
pub mod scrape_families;

pub use harness::{Figure, Pair, Table};
pub use mode::Mode;
pub use output::Output;
