//! Helpers shared by the integration tests (each test binary uses a subset).
#![allow(dead_code)]

pub mod exposition;
pub mod host;
pub mod independent;
pub mod layered;
pub mod pki;
pub mod raw_http;
