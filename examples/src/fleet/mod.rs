//! `gym-fleet`: a real multi-process gym fleet on loopback.
//!
//! The orchestrator ([`orchestrator`]) re-executes the binary as resources
//! servers ([`server`]) and agents ([`agent`]); each child reports to it one
//! JSON line per second on its standard output ([`protocol`]).

pub mod accept;
pub mod agent;
pub mod args;
pub mod child;
pub mod client;
pub mod discovery;
pub mod histogram;
pub mod launch;
pub mod orchestrator;
pub mod protocol;
pub mod rng;
pub mod roster;
pub mod scrape_config;
pub mod server;
pub mod spans;
pub mod task_body;
pub mod verdict;
pub mod view;
