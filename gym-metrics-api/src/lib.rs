#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod backend;
mod bad_input;
mod boundaries;
mod catalogue;
mod cell;
mod compiled_off;
mod facade;
mod file_sd;
mod fleet_target;
mod http_server;
mod install;
mod recorder;
mod role;
mod sd_json;
mod span_groups;
mod timer;
mod units;

pub use bad_input::dropped_values;
pub use facade::{
    enabled, group_enabled, record_active_servers, record_http_server_request,
    record_rollout_duration, record_rollout_duration_ms, record_verify, record_verify_ms,
};
pub use file_sd::FileSdError;
pub use fleet_target::{FleetTarget, FleetTargetError};
pub use http_server::{
    HttpMethod, HttpServerRequest, HttpServerRequestTimer, RouteTable, RouteTableError, UrlScheme,
};
#[cfg(feature = "tower")]
pub use http_server::{HttpServerMetrics, HttpServerMetricsFuture, HttpServerMetricsLayer};
pub use install::{install, role, FleetSize, Installation, SetRecorderError};
pub use role::{Role, RoleError};
pub use span_groups::Group;
pub use timer::{RolloutTimer, VerifyTimer};
