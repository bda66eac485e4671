//! # gym-bench
//!
//! The benchmarks of gym-metrics beside the libraries a user would otherwise
//! pick, measured the way a noisy shared machine allows: every candidate of a
//! table runs in the same process, in short interleaved runs, and the tables
//! compare ratios. `cargo xtask bench` runs them all and writes
//! `BENCHMARKS.md`.
//!
//! Every bench binary has two modes:
//!
//! - timing (`cargo bench -p gym-bench`): many rounds, figures printed and,
//!   when `GYM_BENCH_OUT` names a directory, written there as JSON;
//! - quick (`cargo test -p gym-bench --benches`, or `cargo bench -- --test`):
//!   each candidate runs a few hundred iterations once, so the benchmarks
//!   cannot rot, with no timing claim.
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

pub mod cpu_time;
pub mod harness;
pub mod mode;
pub mod otlp_sink;
pub mod output;
pub mod peers;
pub mod scrape_families;

pub use harness::{measure, Candidate, Figure};
pub use mode::Mode;
pub use output::Output;
