//! One process of the fleet as a scraper should discover it: its `/metrics`
//! address and the labels every one of its series gets.

use std::collections::BTreeMap;

use crate::Role;

/// A scrape target of the fleet: a `host:port` serving `/metrics` and its
/// labels, one entry of the orchestrator's service discovery.
///
/// Labels are kept in name order, so the published list is the same text
/// for the same fleet.
///
/// ```
/// use gym_metrics_api::{FleetTarget, Role};
/// let t = FleetTarget::of_process("127.0.0.1:9101", &Role::server("math-0", "resources"), Some("run-7"))?
///     .with_label("team", "rl")?;
/// assert_eq!(t.address(), "127.0.0.1:9101");
/// let names: Vec<&str> = t.labels().keys().map(String::as_str).collect();
/// assert_eq!(names, ["gym_role", "nemo_gym_server_name", "nemo_gym_server_type", "nemo_run_id", "team"]);
/// # Ok::<(), gym_metrics_api::FleetTargetError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FleetTarget {
    address: String,
    labels: BTreeMap<String, String>,
}

impl FleetTarget {
    /// Prometheus label of the server's name (`nemo.gym.server.name`).
    ///
    /// ```
    /// use gym_metrics_api::{FleetTarget, Role};
    /// let t = FleetTarget::of_process("127.0.0.1:9101", &Role::server("math-0", "resources"), None)?;
    /// assert_eq!(t.labels()[FleetTarget::SERVER_NAME_LABEL], "math-0");
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub const SERVER_NAME_LABEL: &str = "nemo_gym_server_name";
    /// Prometheus label of the server's type (`nemo.gym.server.type`).
    ///
    /// ```
    /// use gym_metrics_api::{FleetTarget, Role};
    /// let t = FleetTarget::of_process("127.0.0.1:9101", &Role::server("math-0", "resources"), None)?;
    /// assert_eq!(t.labels()[FleetTarget::SERVER_TYPE_LABEL], "resources");
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub const SERVER_TYPE_LABEL: &str = "nemo_gym_server_type";
    /// Prometheus label of the run id (`nemo.run.id`).
    ///
    /// ```
    /// use gym_metrics_api::{FleetTarget, Role};
    /// let t = FleetTarget::of_process("127.0.0.1:9100", &Role::orchestrator(), Some("run-7"))?;
    /// assert_eq!(t.labels()[FleetTarget::RUN_ID_LABEL], "run-7");
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub const RUN_ID_LABEL: &str = "nemo_run_id";
    /// Prometheus label of the role (`gym.role`: `orchestrator` or `server`).
    ///
    /// ```
    /// use gym_metrics_api::{FleetTarget, Role};
    /// let t = FleetTarget::of_process("127.0.0.1:9100", &Role::orchestrator(), None)?;
    /// assert_eq!(t.labels()[FleetTarget::ROLE_LABEL], "orchestrator");
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub const ROLE_LABEL: &str = "gym_role";

    /// A target at `address` (`host:port`, no scheme or path) without labels.
    ///
    /// # Errors
    /// [`FleetTargetError::Address`] when `address` is empty, holds
    /// whitespace, a control character or a `/` (a scheme or a path).
    ///
    /// ```
    /// use gym_metrics_api::FleetTarget;
    /// assert!(FleetTarget::new("gym-7.cluster:9464").is_ok());
    /// assert!(FleetTarget::new("http://gym-7:9464/metrics").is_err());
    /// ```
    pub fn new(address: impl Into<String>) -> Result<Self, FleetTargetError> {
        let address = address.into();
        let bad = address.is_empty()
            || address
                .chars()
                .any(|c| c == '/' || c.is_whitespace() || c.is_control());
        if bad {
            return Err(FleetTargetError::Address { address });
        }
        Ok(Self {
            address,
            labels: BTreeMap::new(),
        })
    }

    /// A target at `address` for a process of `role`, with the fleet's
    /// stable labels: [`Self::ROLE_LABEL`], [`Self::SERVER_NAME_LABEL`],
    /// [`Self::SERVER_TYPE_LABEL`] and, when there is one, [`Self::RUN_ID_LABEL`].
    ///
    /// # Errors
    /// As [`FleetTarget::new`].
    ///
    /// ```
    /// use gym_metrics_api::{FleetTarget, Role};
    /// let t = FleetTarget::of_process("127.0.0.1:9100", &Role::orchestrator(), None)?;
    /// assert_eq!(t.labels()["nemo_gym_server_type"], "orchestrator");
    /// assert!(!t.labels().contains_key("nemo_run_id"));
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub fn of_process(
        address: impl Into<String>,
        role: &Role,
        run_id: Option<&str>,
    ) -> Result<Self, FleetTargetError> {
        let mut target = Self::new(address)?;
        let labels = &mut target.labels;
        labels.insert(Self::ROLE_LABEL.into(), role.kind().into());
        labels.insert(Self::SERVER_NAME_LABEL.into(), role.name().into());
        labels.insert(Self::SERVER_TYPE_LABEL.into(), role.server_type().into());
        if let Some(run_id) = run_id {
            labels.insert(Self::RUN_ID_LABEL.into(), run_id.into());
        }
        Ok(target)
    }

    /// Adds (or replaces) the label `name` with `value`. Any value is fine
    /// (it is escaped when rendered).
    ///
    /// # Errors
    /// [`FleetTargetError::LabelName`] unless `name` is a Prometheus label
    /// name (`[a-zA-Z_][a-zA-Z0-9_]*`) that does not start with `__`
    /// (reserved for Prometheus's own).
    ///
    /// ```
    /// use gym_metrics_api::FleetTarget;
    /// let t = FleetTarget::new("127.0.0.1:9101")?.with_label("zone", "a \"quoted\" one")?;
    /// assert_eq!(t.labels()["zone"], "a \"quoted\" one");
    /// assert!(FleetTarget::new("127.0.0.1:9101")?.with_label("gym.role", "x").is_err());
    /// assert!(FleetTarget::new("127.0.0.1:9101")?.with_label("__address__", "x").is_err());
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub fn with_label(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, FleetTargetError> {
        let name = name.into();
        if !is_label_name(&name) {
            return Err(FleetTargetError::LabelName { name });
        }
        self.labels.insert(name, value.into());
        Ok(self)
    }

    /// The `host:port` a scraper reads `/metrics` from.
    ///
    /// ```
    /// let t = gym_metrics_api::FleetTarget::new("127.0.0.1:9101")?;
    /// assert_eq!(t.address(), "127.0.0.1:9101");
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The labels, in name order.
    ///
    /// ```
    /// let t = gym_metrics_api::FleetTarget::new("127.0.0.1:9101")?;
    /// assert!(t.labels().is_empty());
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__`.
fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with("__")
}

/// A fleet target that Prometheus would refuse.
///
/// ```
/// let e = gym_metrics_api::FleetTarget::new("").unwrap_err();
/// assert!(e.to_string().contains("host:port"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FleetTargetError {
    /// The address is not a bare `host:port`.
    #[error("fleet target address {address:?} is not a bare host:port: give the host and port a scraper reaches /metrics at, without scheme or path")]
    Address {
        /// The address given.
        address: String,
    },
    /// The label name is not a Prometheus label name.
    #[error("fleet target label name {name:?} is not a Prometheus label name: use letters, digits and underscores, not starting with a digit or with __")]
    LabelName {
        /// The name given.
        name: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_names_follow_prometheus() {
        for good in ["a", "_a", "nemo_run_id", "A9_"] {
            assert!(is_label_name(good), "{good}");
        }
        for bad in ["", "9a", "a.b", "a-b", "__x", "é"] {
            assert!(!is_label_name(bad), "{bad}");
        }
    }

    #[test]
    fn addresses_are_bare_host_port() {
        assert!(FleetTarget::new("[::1]:9100").is_ok());
        for bad in ["", "a b:1", "h:1/metrics", "h:1\n"] {
            assert!(
                matches!(FleetTarget::new(bad), Err(FleetTargetError::Address { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_server_target_names_the_server() {
        let t =
            FleetTarget::of_process("h:1", &Role::server("agent-3", "agent"), Some("r")).unwrap();
        let labels: Vec<(&str, &str)> = t
            .labels()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            labels,
            [
                ("gym_role", "server"),
                ("nemo_gym_server_name", "agent-3"),
                ("nemo_gym_server_type", "agent"),
                ("nemo_run_id", "r"),
            ]
        );
    }
}
