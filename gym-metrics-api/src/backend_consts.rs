//! What every backend shares and each would otherwise write down on its
//! own: the default role, the instrumentation scope, the largest duration
//! recorded and the already-installed message. For backend implementers.

use crate::Role;

/// The name of the role a builder declares until `role(..)` is called.
///
/// ```
/// use gym_metrics_api::backend::{default_server_role, DEFAULT_SERVER_NAME};
/// assert_eq!(default_server_role().name(), DEFAULT_SERVER_NAME);
/// ```
pub const DEFAULT_SERVER_NAME: &str = "server";

/// The server type of the role a builder declares until `role(..)` is called.
///
/// ```
/// use gym_metrics_api::backend::{default_server_role, DEFAULT_SERVER_TYPE};
/// assert_eq!(default_server_role().server_type(), DEFAULT_SERVER_TYPE);
/// ```
pub const DEFAULT_SERVER_TYPE: &str = "server";

/// The role every backend's builder starts with: a server named
/// [`DEFAULT_SERVER_NAME`] of type [`DEFAULT_SERVER_TYPE`]. A fleet process
/// declares its own with the builder's `role(..)`.
///
/// ```
/// let role = gym_metrics_api::backend::default_server_role();
/// assert!(!role.is_orchestrator());
/// assert_eq!((role.name(), role.server_type()), ("server", "server"));
/// ```
pub fn default_server_role() -> Role {
    Role::server(DEFAULT_SERVER_NAME, DEFAULT_SERVER_TYPE)
}

/// The instrumentation scope name of every gym instrument: the OpenTelemetry
/// meter's name, and `otel_scope_name` on every Prometheus series.
///
/// ```
/// // The scope is named after the crates that record into it.
/// assert!(env!("CARGO_PKG_NAME").starts_with(gym_metrics_api::backend::SCOPE_NAME));
/// ```
pub const SCOPE_NAME: &str = "gym-metrics";

/// The instrumentation scope version (`otel_scope_version`): the workspace
/// version, shared by every gym-metrics crate.
///
/// ```
/// assert!(!gym_metrics_api::backend::SCOPE_VERSION.is_empty());
/// ```
pub const SCOPE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The largest duration recorded, in milliseconds: [`std::time::Duration::MAX`]'s
/// (~5.8e11 years). A larger finite value is recorded as this one, in the
/// same `+Inf` bucket, so that no number of records can push a histogram's
/// sum to infinity (`f64::MAX` twice would).
///
/// ```
/// let max = std::time::Duration::MAX.as_secs_f64() * 1_000.0;
/// assert_eq!(gym_metrics_api::backend::MAX_DURATION_MS, max);
/// ```
pub const MAX_DURATION_MS: f64 = u64::MAX as f64 * 1_000.0;

/// What every "a recorder is already installed" error says, whichever
/// backend (or [`crate::install`] itself) found the facade taken.
///
/// ```
/// assert!(gym_metrics_api::backend::ALREADY_INSTALLED.contains("once, at start-up"));
/// ```
pub const ALREADY_INSTALLED: &str = "a gym-metrics recorder is already installed in this process: \
     install one backend, once, at start-up (a backend's build() gives a recorder that is not installed)";
