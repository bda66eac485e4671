//! The role a process declares once, at install: orchestrator or server.

use std::fmt;

/// What a process is in the fleet, declared once when its backend is installed.
///
/// Only the orchestrator knows the fleet size, so only an orchestrator install
/// may write `gym.servers.active` (see [`crate::FleetSize`]).
///
/// ```
/// use gym_metrics_api::Role;
/// let role = Role::server("math-verifier", "resources");
/// assert!(!role.is_orchestrator());
/// assert_eq!(role.name(), "math-verifier");
/// assert_eq!(Role::orchestrator().kind(), "orchestrator");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// The one process that launches the fleet and knows its size.
    Orchestrator,
    /// A server launched by the orchestrator.
    Server {
        /// The server's name, unique within the fleet (e.g. `math-verifier-0`).
        name: String,
        /// The server's type (e.g. `resources`, `agent`, `model`).
        server_type: String,
    },
}

impl Role {
    /// The orchestrator role.
    ///
    /// ```
    /// assert!(gym_metrics_api::Role::orchestrator().is_orchestrator());
    /// ```
    pub fn orchestrator() -> Self {
        Role::Orchestrator
    }

    /// A server role with its name and type.
    ///
    /// ```
    /// let r = gym_metrics_api::Role::server("agent-0", "agent");
    /// assert_eq!(r.server_type(), "agent");
    /// ```
    pub fn server(name: impl Into<String>, server_type: impl Into<String>) -> Self {
        Role::Server {
            name: name.into(),
            server_type: server_type.into(),
        }
    }

    /// The role of a process that declares none: a server named `server`
    /// of type `server`, so its series still carry every role attribute.
    ///
    /// ```
    /// let r = gym_metrics_api::Role::default_server();
    /// assert_eq!((r.name(), r.server_type()), ("server", "server"));
    /// ```
    pub fn default_server() -> Self {
        Role::server("server", "server")
    }

    /// True for the orchestrator.
    ///
    /// ```
    /// assert!(!gym_metrics_api::Role::server("s", "resources").is_orchestrator());
    /// ```
    pub fn is_orchestrator(&self) -> bool {
        matches!(self, Role::Orchestrator)
    }

    /// THE role rule: only the orchestrator writes `gym.servers.active`.
    ///
    /// Only the orchestrator launches the fleet, so only it knows its size; a
    /// gauge written by more than one process would export whichever wrote
    /// last. The facade's runtime check, [`crate::Installation::fleet_size`]
    /// and every backend's choice (at build time) of whether it has a fleet
    /// gauge at all read this one function.
    ///
    /// ```
    /// use gym_metrics_api::Role;
    /// assert!(Role::orchestrator().writes_fleet_size());
    /// assert!(!Role::server("math-0", "resources").writes_fleet_size());
    /// ```
    pub fn writes_fleet_size(&self) -> bool {
        self.is_orchestrator()
    }

    /// `orchestrator` or `server`: the value of the `gym.role` resource attribute.
    ///
    /// ```
    /// assert_eq!(gym_metrics_api::Role::server("s", "resources").kind(), "server");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Role::Orchestrator => "orchestrator",
            Role::Server { .. } => "server",
        }
    }

    /// The process name: `orchestrator`, or the server's name. Used in `service.name`.
    ///
    /// ```
    /// assert_eq!(gym_metrics_api::Role::orchestrator().name(), "orchestrator");
    /// ```
    pub fn name(&self) -> &str {
        match self {
            Role::Orchestrator => "orchestrator",
            Role::Server { name, .. } => name,
        }
    }

    /// The server type, or `orchestrator`.
    ///
    /// ```
    /// assert_eq!(gym_metrics_api::Role::orchestrator().server_type(), "orchestrator");
    /// ```
    pub fn server_type(&self) -> &str {
        match self {
            Role::Orchestrator => "orchestrator",
            Role::Server { server_type, .. } => server_type,
        }
    }

    /// The resource attributes every backend attaches for this role, as
    /// `(key, value)` pairs: `gym.role`, and NeMo Gym's `nemo.gym.server.name`
    /// and `nemo.gym.server.type`.
    ///
    /// ```
    /// let attrs = gym_metrics_api::Role::server("s-0", "resources").resource_attributes();
    /// assert_eq!(attrs[0], ("gym.role", "server".to_string()));
    /// ```
    pub fn resource_attributes(&self) -> [(&'static str, String); 3] {
        [
            (Self::ROLE_ATTRIBUTE, self.kind().to_string()),
            (Self::SERVER_NAME_ATTRIBUTE, self.name().to_string()),
            (Self::SERVER_TYPE_ATTRIBUTE, self.server_type().to_string()),
        ]
    }

    /// `service.name` for this process: `<base>/<name>`, where `base` is
    /// `OTEL_SERVICE_NAME` or `nemo-gym` (NeMo Gym's).
    ///
    /// ```
    /// let r = gym_metrics_api::Role::server("s-0", "resources");
    /// assert_eq!(r.service_name(None), "nemo-gym/s-0");
    /// assert_eq!(r.service_name(Some("lab")), "lab/s-0");
    /// ```
    pub fn service_name(&self, base: Option<&str>) -> String {
        format!(
            "{}/{}",
            base.unwrap_or(Self::DEFAULT_SERVICE_NAME),
            self.name()
        )
    }

    /// The base of `service.name` when `OTEL_SERVICE_NAME` is not set: NeMo
    /// Gym's (its orchestrator sets `OTEL_SERVICE_NAME=nemo-gym` by default).
    ///
    /// ```
    /// use gym_metrics_api::Role;
    /// let without_env = Role::orchestrator().service_name(None);
    /// assert_eq!(without_env, format!("{}/orchestrator", Role::DEFAULT_SERVICE_NAME));
    /// ```
    pub const DEFAULT_SERVICE_NAME: &str = "nemo-gym";
    /// Resource attribute carrying [`Role::kind`].
    ///
    /// ```
    /// use gym_metrics_api::Role;
    /// let attrs = Role::server("s-0", "resources").resource_attributes();
    /// assert!(attrs.contains(&(Role::ROLE_ATTRIBUTE, "server".to_string())));
    /// ```
    pub const ROLE_ATTRIBUTE: &str = "gym.role";
    /// Resource attribute carrying [`Role::name`]: NeMo Gym's key.
    ///
    /// ```
    /// use gym_metrics_api::Role;
    /// let attrs = Role::server("math-0", "resources").resource_attributes();
    /// assert!(attrs.contains(&(Role::SERVER_NAME_ATTRIBUTE, "math-0".to_string())));
    /// ```
    pub const SERVER_NAME_ATTRIBUTE: &str = "nemo.gym.server.name";
    /// Resource attribute carrying [`Role::server_type`]: NeMo Gym's key (Gym's
    /// types are `resources_servers`, `responses_api_agents`,
    /// `responses_api_models`, `environment_servers` and `orchestrator`).
    ///
    /// ```
    /// use gym_metrics_api::Role;
    /// let attrs = Role::orchestrator().resource_attributes();
    /// assert!(attrs.contains(&(Role::SERVER_TYPE_ATTRIBUTE, "orchestrator".to_string())));
    /// ```
    pub const SERVER_TYPE_ATTRIBUTE: &str = "nemo.gym.server.type";
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::Orchestrator => f.write_str("orchestrator"),
            Role::Server { name, server_type } => {
                write!(f, "server {name:?} (type {server_type:?})")
            }
        }
    }
}

/// `Ok` when `role` may write `gym.servers.active` ([`Role::writes_fleet_size`]),
/// otherwise the [`RoleError`] naming it: the facade's runtime refusal.
pub(crate) fn check_writes_fleet_size(role: &Role) -> Result<(), RoleError> {
    if role.writes_fleet_size() {
        Ok(())
    } else {
        Err(RoleError { role: role.clone() })
    }
}

/// `gym.servers.active` was written from a process that is not the orchestrator.
/// Nothing was recorded.
///
/// ```
/// use gym_metrics_api::{Role, RoleError};
/// let e = RoleError { role: Role::server("s-0", "resources") };
/// assert!(e.to_string().contains("\"s-0\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("gym.servers.active is written by the orchestrator only, but this process is {role}: nothing was recorded; let the orchestrator report the fleet size")]
pub struct RoleError {
    /// The role this process declared at install.
    pub role: Role,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_follows_the_rule_and_names_the_role() {
        assert_eq!(check_writes_fleet_size(&Role::orchestrator()), Ok(()));
        let server = Role::server("agent-3", "agent");
        assert_eq!(
            check_writes_fleet_size(&server),
            Err(RoleError {
                role: server.clone()
            })
        );
        assert!(!server.writes_fleet_size());
    }
}
