//! Shared pieces of the examples: the backend chosen at build time
//! ([`backend`]), the logger ([`logging`]), and the `gym-fleet` simulation
//! ([`fleet`]).
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod backend;
pub mod fleet;
pub mod logging;

// Every code block of README.md and docs/*.md is a doc test of this crate
// (issue 30), so none can rot: Rust blocks compile (and run unless
// `no_run`), and every other block says its language so rustdoc leaves it
// alone. Each page is included under the features its blocks need; the page
// with both backends' blocks runs in `cargo xtask ci`'s
// `cargo test --doc -p gym-metrics-examples --features otel` (prom and otel).
// `cargo xtask ci` also checks that every page of docs/ is named here.
#[cfg(all(doctest, feature = "prom"))]
#[doc = include_str!("../../README.md")]
mod readme {}
#[cfg(all(doctest, feature = "prom"))]
#[doc = include_str!("../../docs/configuration.md")]
mod docs_configuration {}
#[cfg(doctest)]
#[doc = include_str!("../../docs/demo.md")]
mod docs_demo {}
#[cfg(doctest)]
#[doc = include_str!("../../docs/development.md")]
mod docs_development {}
#[cfg(all(doctest, feature = "prom", feature = "otel"))]
#[doc = include_str!("../../docs/extensions.md")]
mod docs_extensions {}
#[cfg(all(doctest, feature = "prom"))]
#[doc = include_str!("../../docs/nemo-gym.md")]
mod docs_nemo_gym {}
#[cfg(all(doctest, feature = "prom"))]
#[doc = include_str!("../../docs/operators.md")]
mod docs_operators {}
#[cfg(all(doctest, feature = "prom"))]
#[doc = include_str!("../../docs/tls-and-auth.md")]
mod docs_tls_and_auth {}
