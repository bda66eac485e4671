//! Test support for the e2e tests.
