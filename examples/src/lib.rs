//! Shared pieces of the examples: the backend chosen at build time, and the
//! `gym-fleet` simulation.

pub mod backend;
pub mod fleet;
