//! Test support for the e2e tests: find the provisioned tools (Prometheus,
//! promtool, VictoriaMetrics, rotel, vmagent), start throwaway servers on loopback, query
//! them, and kill them by PID when dropped.
//! A scenario that could abort the process runs in a child ([`run_in_child`]).
//!
//! Tools come from `cargo xtask tools` (`<workspace>/target/tools/bin`), an env
//! override (`PROMETHEUS_BIN`, `PROMTOOL_BIN`, `VICTORIA_METRICS_BIN`, `ROTEL_BIN`, `VMAGENT_BIN`)
//! or `PATH`. A test starts with [`require`]: a missing tool is provisioned
//! then (`cargo xtask tools`), and a tool that cannot be fails the test.
//!
//! ```
//! use std::time::Duration;
//! use gym_testkit::{require, Prometheus, Tool};
//!
//! require(Tool::Prometheus);
//! let prometheus = Prometheus::start(&["127.0.0.1:9000".to_string()], Duration::from_millis(200)).unwrap();
//! let up = prometheus
//!     .wait_for("up", Duration::from_secs(30), |samples| !samples.is_empty())
//!     .unwrap();
//! assert_eq!(up[0].labels["job"], "gym");
//! ```
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod any_f64;
mod child_process;
mod gym_env;
mod http;
mod http_server;
pub mod mixed_records;
mod ops_kit;
mod port;
pub mod process_load;
mod prometheus;
mod promtool;
mod rotel;
mod sample;
pub mod scale_fleet;
mod server;
mod temp_dir;
mod terminal;
mod terminate;
pub mod thread_exit;
mod tool;
mod victoria_metrics;
mod vmagent;

pub use any_f64::any_f64;
pub use child_process::{in_child, ran_alone_in_child, ran_in_child, run_in_child, CHILD_ENV};
pub use gym_env::gym_env;
pub use http::{http_get, http_post, Response};
pub use http_server::{send_mix, send_raw, serve_layered, MIX, ROUTES};
pub use ops_kit::{check_everything, rule_names, AlertExpectation, DeployKit, Topology};
pub use port::{free_port, free_port_block};
pub use prometheus::{scrape_config, Prometheus};
pub use promtool::{contract_findings, promtool_check_metrics};
pub use rotel::Rotel;
pub use sample::{RawSeries, Sample};
pub use temp_dir::TempDir;
pub use terminal::Terminal;
pub use terminate::terminate;
pub use tool::{
    find_on_path, is_executable, require, tool_path, tools_bin_dir, tools_dir, workspace_root, Tool,
};
pub use victoria_metrics::VictoriaMetrics;
pub use vmagent::Vmagent;
