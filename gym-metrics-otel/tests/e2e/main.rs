//! e2e against real servers, for the scenarios that install nothing
//! process-wide (each builds its own recorders): one test binary, named
//! `*e2e*` so that `cargo xtask e2e` runs it.

#[path = "../support/mod.rs"]
mod support;

mod rotel_grpc;
mod rotel_grpc_restart;
mod victoria_http;
