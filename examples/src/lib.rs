//! Shared pieces of the examples: the backend chosen at build time
//! ([`backend`]), the logger ([`logging`]), and the `gym-fleet` simulation
//! ([`fleet`]).
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod backend;
pub mod fleet;
pub mod logging;
