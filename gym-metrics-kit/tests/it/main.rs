//! The kit's integration tests, linked once as one binary.
//!
//! A test that installs process-wide state (the facade's recorder, a logger,
//! the `metrics` recorder, environment variables) starts with
//! `gym_testkit::ran_in_child()`: nextest (`cargo xtask ci`) gives every test a
//! process of its own, and under plain `cargo test` such a test runs again,
//! alone, in a child process.

mod per_thread_reuse;
mod process;
