//! NeMo Gym's span groups: which call sites record. Gym gates each call site
//! on a group (`verify` gates `gym.verify.*`, `rollout` gates
//! `gym.rollout.duration_ms`); `…_SPAN_GROUPS` picks the groups by name or
//! preset. The names and presets are Gym's (nemo-gym 0.7.0,
//! `nemo_gym/telemetry/span_groups.py`).

use std::fmt;

/// One of NeMo Gym's span groups.
///
/// ```
/// use gym_metrics_api::Group;
/// assert_eq!(Group::Verify.name(), "verify");
/// assert_eq!(Group::ALL.len(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Group {
    /// The job as a whole.
    Job,
    /// The HTTP server side of a Gym server: gates `http.server.request.duration`.
    Server,
    /// Outgoing HTTP calls between Gym servers.
    HttpClient,
    /// Rollout collection: gates `gym.rollout.duration_ms`.
    Rollout,
    /// Verification: gates `gym.verify.*` (off under Gym's `default` preset).
    Verify,
    /// Agent responses.
    Agent,
    /// Model calls.
    ModelCall,
    /// Sandboxes.
    Sandbox,
}

impl Group {
    /// Every group, in Gym's order.
    pub const ALL: [Group; 8] = [
        Group::Job,
        Group::Server,
        Group::HttpClient,
        Group::Rollout,
        Group::Verify,
        Group::Agent,
        Group::ModelCall,
        Group::Sandbox,
    ];

    /// The group's name as `…_SPAN_GROUPS` spells it.
    ///
    /// ```
    /// assert_eq!(gym_metrics_api::Group::HttpClient.name(), "http_client");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Group::Job => "job",
            Group::Server => "server",
            Group::HttpClient => "http_client",
            Group::Rollout => "rollout",
            Group::Verify => "verify",
            Group::Agent => "agent",
            Group::ModelCall => "model_call",
            Group::Sandbox => "sandbox",
        }
    }

    /// The group's bit in a [`SpanGroups`] mask.
    pub(crate) const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`Group`]s: the groups a process records.
///
/// ```
/// use gym_metrics_api::backend::SpanGroups;
/// use gym_metrics_api::Group;
/// let groups = SpanGroups::parse("default,verify").unwrap();
/// assert!(groups.contains(Group::Verify) && groups.contains(Group::Job));
/// assert!(!SpanGroups::DEFAULT_PRESET.contains(Group::Verify));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanGroups(u8);

/// Gym's cross-process spine: `server`, `http_client`, `rollout`.
const SPINE: u8 = Group::Server.bit() | Group::HttpClient.bit() | Group::Rollout.bit();

impl SpanGroups {
    /// Every group: what a process records when `…_SPAN_GROUPS` is unset
    /// (gym-metrics' default; Gym's own default is its `default` preset).
    ///
    /// ```
    /// use gym_metrics_api::backend::SpanGroups;
    /// assert!(gym_metrics_api::Group::ALL.iter().all(|g| SpanGroups::ALL.contains(*g)));
    /// ```
    pub const ALL: SpanGroups = SpanGroups(0xFF);

    /// No group at all.
    ///
    /// ```
    /// assert!(!gym_metrics_api::backend::SpanGroups::NONE.contains(gym_metrics_api::Group::Job));
    /// ```
    pub const NONE: SpanGroups = SpanGroups(0);

    /// Gym's `default` preset: `job`, `server`, `http_client`, `rollout`.
    ///
    /// ```
    /// use gym_metrics_api::{backend::SpanGroups, Group};
    /// assert_eq!(SpanGroups::DEFAULT_PRESET.to_string(), "job,server,http_client,rollout");
    /// ```
    pub const DEFAULT_PRESET: SpanGroups = SpanGroups(Group::Job.bit() | SPINE);

    /// Gym's `per_rollout` preset: `verify`, `agent`, `model_call` and the
    /// spine (`server`, `http_client`, `rollout`); no `job`.
    ///
    /// ```
    /// use gym_metrics_api::{backend::SpanGroups, Group};
    /// assert!(SpanGroups::PER_ROLLOUT.contains(Group::Verify));
    /// assert!(!SpanGroups::PER_ROLLOUT.contains(Group::Job));
    /// ```
    pub const PER_ROLLOUT: SpanGroups =
        SpanGroups(Group::Verify.bit() | Group::Agent.bit() | Group::ModelCall.bit() | SPINE);

    /// Whether `group` is in the set.
    ///
    /// ```
    /// use gym_metrics_api::{backend::SpanGroups, Group};
    /// assert!(SpanGroups::DEFAULT_PRESET.contains(Group::Rollout));
    /// ```
    #[inline(always)]
    pub const fn contains(self, group: Group) -> bool {
        self.0 & group.bit() != 0
    }

    /// The set as a bit mask (bit `n` is the `n`th of [`Group::ALL`]).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Parses a comma-separated list of group names and presets
    /// (`default`, `per_rollout`, `all`), case-insensitive, as Gym does;
    /// `None` for an unknown name or a list naming nothing (the environment
    /// reader turns that into an error quoting [`SpanGroups::valid_names`]).
    ///
    /// ```
    /// use gym_metrics_api::backend::SpanGroups;
    /// assert!(SpanGroups::parse("verify,checkpoint").is_none());
    /// assert_eq!(SpanGroups::parse(" Verify ,,"), SpanGroups::parse("verify"));
    /// ```
    pub fn parse(value: &str) -> Option<Self> {
        let mut bits = 0;
        let mut named = false;
        for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            named = true;
            bits |= match entry.to_ascii_lowercase().as_str() {
                "default" => Self::DEFAULT_PRESET.0,
                "per_rollout" => Self::PER_ROLLOUT.0,
                "all" => Self::ALL.0,
                name => Group::ALL.iter().find(|g| g.name() == name)?.bit(),
            };
        }
        named.then_some(SpanGroups(bits))
    }

    /// What [`SpanGroups::parse`] accepts, for an error message: every group
    /// name and preset.
    ///
    /// ```
    /// let valid = gym_metrics_api::backend::SpanGroups::valid_names();
    /// assert!(valid.contains("model_call") && valid.contains("per_rollout"));
    /// ```
    pub fn valid_names() -> String {
        let names: Vec<&str> = Group::ALL.iter().map(|g| g.name()).collect();
        format!(
            "a comma-separated list of span groups ({}) and presets (default = {}; per_rollout = {}; all)",
            names.join(", "),
            SpanGroups::DEFAULT_PRESET,
            SpanGroups::PER_ROLLOUT
        )
    }
}

impl fmt::Display for SpanGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Group::ALL
            .iter()
            .filter(|g| self.contains(**g))
            .map(|g| g.name())
            .collect();
        f.write_str(&names.join(","))
    }
}

impl fmt::Debug for SpanGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SpanGroups({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(groups: SpanGroups) -> String {
        groups.to_string()
    }

    #[test]
    fn presets_are_gyms() {
        assert_eq!(
            names(SpanGroups::parse("default").unwrap()),
            "job,server,http_client,rollout"
        );
        assert_eq!(
            names(SpanGroups::parse("per_rollout").unwrap()),
            "server,http_client,rollout,verify,agent,model_call"
        );
        assert_eq!(
            names(SpanGroups::parse("ALL").unwrap()),
            "job,server,http_client,rollout,verify,agent,model_call,sandbox"
        );
    }

    #[test]
    fn names_and_presets_combine_case_insensitively() {
        let g = SpanGroups::parse(" Default , VERIFY,,sandbox ").unwrap();
        assert_eq!(names(g), "job,server,http_client,rollout,verify,sandbox");
        assert_eq!(names(SpanGroups::parse("verify").unwrap()), "verify");
    }

    #[test]
    fn unknown_or_empty_is_refused_and_the_valid_names_listed() {
        for bad in ["checkpoint", "default,evaluate", ",", "verify;rollout"] {
            assert_eq!(SpanGroups::parse(bad), None, "{bad}");
        }
        let text = SpanGroups::valid_names();
        {
            for valid in [
                "job",
                "model_call",
                "sandbox",
                "default",
                "per_rollout",
                "all",
            ] {
                assert!(text.contains(valid), "{valid} missing: {text}");
            }
        }
    }
}
