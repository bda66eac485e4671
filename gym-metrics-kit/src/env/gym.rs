//! The configuration a NeMo Gym orchestrator hands its servers through the
//! environment (`NEMO_GYM_OTEL_*`, falling back to `NEMO_LENS_*`), read once
//! and the same way by every backend, and the resource attributes Gym's
//! processes carry.
//!
//! Gym's precedence: `NEMO_GYM_OTEL_<KEY>` when it is not blank, else
//! `NEMO_LENS_<KEY>` when it is not blank, else the backend's own setting.
//! Unlike Gym (which logs and turns telemetry off), a bad value is an error
//! naming the variable that held it.

use std::time::Duration;

use gym_metrics_api::backend::SpanGroups;
use gym_metrics_api::{Group, Role};

use crate::env::{parse_bool, parse_choice, parse_number, Booleans, EnvVars};
use crate::resource::new_instance_id;
use crate::ConfigError;

/// Resource attribute carrying the run id (`…_RUN_ID`, else `SLURM_JOB_ID`,
/// else one minted per process), as Gym exports it.
pub const RUN_ID_ATTRIBUTE: &str = "nemo.run.id";

/// Resource attribute carrying the base of `service.name` (without the
/// `/<server>` suffix), as Gym exports it: the fleet's name.
pub const SERVICE_GROUP_ATTRIBUTE: &str = "nemo.gym.service_group";

/// The Slurm job id: the run id when no `…_RUN_ID` is set, as in Gym.
const SLURM_JOB_ID: &str = "SLURM_JOB_ID";

/// One Gym setting: its `NEMO_GYM_OTEL_*` name, then its `NEMO_LENS_*` name.
type Pair = [&'static str; 2];
const ENABLED: Pair = ["NEMO_GYM_OTEL_ENABLED", "NEMO_LENS_ENABLED"];
const METRICS_ENABLED: Pair = ["NEMO_GYM_OTEL_METRICS_ENABLED", "NEMO_LENS_METRICS_ENABLED"];
const EXPORTER: Pair = ["NEMO_GYM_OTEL_EXPORTER", "NEMO_LENS_EXPORTER"];
const RUN_ID: Pair = ["NEMO_GYM_OTEL_RUN_ID", "NEMO_LENS_RUN_ID"];
const SERVICE_NAME_PER_SERVER: Pair = [
    "NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER",
    "NEMO_LENS_SERVICE_NAME_PER_SERVER",
];
const SPAN_GROUPS: Pair = ["NEMO_GYM_OTEL_SPAN_GROUPS", "NEMO_LENS_SPAN_GROUPS"];
/// Gym's memory profiling: only the `NEMO_GYM_OTEL_` names, as Gym reads them.
const MEMORY_PROFILING_ENABLED: &str = "NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED";
const MEMORY_PROFILING_INTERVAL: &str = "NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS";
/// Gym's default interval between memory samples.
const MEMORY_PROFILING_DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// What Gym's exporter setting (`…_EXPORTER`) may say: the two exporters Gym
/// supports.
///
/// ```
/// use gym_metrics_kit::env::GymEnv;
/// use gym_metrics_kit::env::GymExporter;
/// let env = GymEnv::read(|n| (n == "NEMO_LENS_EXPORTER").then(|| "Console".to_string()))?;
/// assert_eq!(env.exporter(), Some(GymExporter::Console));
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GymExporter {
    /// OTLP to a collector.
    Otlp,
    /// The console (standard output).
    Console,
}

/// A value read from one of Gym's variables, with the variable it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sourced<T> {
    variable: &'static str,
    raw: String,
    value: T,
}

/// Gym's telemetry settings as the environment gives them: see the module
/// documentation for the precedence.
///
/// | setting (`NEMO_GYM_OTEL_` / `NEMO_LENS_`) | meaning | unset |
/// |---|---|---|
/// | `ENABLED` | `false`: install, but export nothing | enabled |
/// | `METRICS_ENABLED` | `false`: the same, for metrics | enabled |
/// | `EXPORTER` | `otlp` or `console` | the backend's |
/// | `RUN_ID` | `nemo.run.id` | `SLURM_JOB_ID`, else minted |
/// | `SERVICE_NAME_PER_SERVER` | `service.name` = `<base>/<server>`, else `<base>` | true |
/// | `SPAN_GROUPS` | groups and presets recorded | every group |
/// | `MEMORY_PROFILING_ENABLED` (Gym name only) | an orchestrator samples its servers' memory | off |
/// | `MEMORY_PROFILING_INTERVAL_SECONDS` (Gym name only) | seconds between samples (> 0) | 1 |
///
/// Booleans are `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`
/// (case-insensitive).
///
/// ```
/// use gym_metrics_kit::env::GymEnv;
/// use gym_metrics_api::Group;
/// let env = GymEnv::read(|name| match name {
///     "NEMO_GYM_OTEL_SPAN_GROUPS" => Some("default".to_string()),
///     "NEMO_GYM_OTEL_RUN_ID" => Some("run-7".to_string()),
///     _ => None,
/// })?;
/// assert_eq!(env.run_id(), "run-7");
/// assert!(!env.span_groups().contains(Group::Verify));
/// assert_eq!(env.silenced_by(), None);
///
/// let e = GymEnv::read(|n| (n == "NEMO_LENS_ENABLED").then(|| "maybe".to_string())).unwrap_err();
/// assert_eq!(e.variable(), "NEMO_LENS_ENABLED");
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GymEnv {
    enabled: Option<Sourced<bool>>,
    metrics_enabled: Option<Sourced<bool>>,
    exporter: Option<Sourced<GymExporter>>,
    run_id: String,
    service_name_per_server: bool,
    span_groups: Option<Sourced<SpanGroups>>,
    memory_profiling: Option<Duration>,
}

impl Default for GymEnv {
    /// No Gym variable set: enabled, every group, `service.name` per
    /// server, a run id minted for this process.
    fn default() -> Self {
        Self {
            enabled: None,
            metrics_enabled: None,
            exporter: None,
            run_id: mint_run_id(),
            service_name_per_server: true,
            span_groups: None,
            memory_profiling: None,
        }
    }
}

impl GymEnv {
    /// Every variable [`GymEnv::read`] looks up: a backend adds these to
    /// the names it reads from the process environment.
    ///
    /// ```
    /// let names = gym_metrics_kit::env::GymEnv::VARIABLES;
    /// assert!(names.contains(&"NEMO_GYM_OTEL_SPAN_GROUPS") && names.contains(&"SLURM_JOB_ID"));
    /// ```
    pub const VARIABLES: [&'static str; 15] = [
        ENABLED[0],
        ENABLED[1],
        METRICS_ENABLED[0],
        METRICS_ENABLED[1],
        EXPORTER[0],
        EXPORTER[1],
        RUN_ID[0],
        RUN_ID[1],
        SERVICE_NAME_PER_SERVER[0],
        SERVICE_NAME_PER_SERVER[1],
        SPAN_GROUPS[0],
        SPAN_GROUPS[1],
        SLURM_JOB_ID,
        MEMORY_PROFILING_ENABLED,
        MEMORY_PROFILING_INTERVAL,
    ];

    /// Reads Gym's variables through `lookup` (the process environment in a
    /// backend's `from_env()`, a map in tests).
    ///
    /// # Errors
    /// A value that is not a boolean, an exporter or a span-group list,
    /// naming the variable that held it and the value.
    ///
    /// ```
    /// use gym_metrics_kit::env::GymEnv;
    /// let env = GymEnv::read(|n| match n {
    ///     "NEMO_GYM_OTEL_ENABLED" => Some("0".to_string()),
    ///     "NEMO_LENS_ENABLED" => Some("1".to_string()), // the Gym prefix wins
    ///     _ => None,
    /// })?;
    /// assert_eq!(env.silenced_by().as_deref(), Some("NEMO_GYM_OTEL_ENABLED=\"0\""));
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn read(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let vars = EnvVars::from_lookup(&Self::VARIABLES, lookup);
        let get = |pair: Pair| {
            vars.first(&pair)
                .map(|(variable, raw)| (variable, raw.trim().to_string()))
        };
        let flag = |pair: Pair| -> Result<Option<Sourced<bool>>, ConfigError> {
            get(pair)
                .map(|(variable, raw)| {
                    let value = parse_bool(variable, &raw, Booleans::Gym)?;
                    Ok(Sourced {
                        variable,
                        raw,
                        value,
                    })
                })
                .transpose()
        };
        let exporter = get(EXPORTER)
            .map(|(variable, raw)| {
                let words = [
                    ("otlp", GymExporter::Otlp),
                    ("console", GymExporter::Console),
                ];
                let value =
                    parse_choice(variable, &raw, &words, "the exporters NeMo Gym supports")?;
                Ok(Sourced {
                    variable,
                    raw,
                    value,
                })
            })
            .transpose()?;
        let span_groups = get(SPAN_GROUPS)
            .map(|(variable, raw)| {
                let value = SpanGroups::parse(&raw).ok_or_else(|| {
                    ConfigError::invalid(variable, &raw, SpanGroups::valid_names())
                })?;
                Ok::<_, ConfigError>(Sourced {
                    variable,
                    raw,
                    value,
                })
            })
            .transpose()?;
        // Validated even while profiling is off, as Gym's config model does.
        let interval = get([MEMORY_PROFILING_INTERVAL; 2])
            .map(|(variable, raw)| {
                const EXPECTED: &str = "a positive number of seconds, e.g. 1 or 0.5";
                let seconds: f64 = parse_number(variable, &raw, EXPECTED)?;
                Duration::try_from_secs_f64(seconds)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| ConfigError::invalid(variable, &raw, EXPECTED))
            })
            .transpose()?;
        let memory_profiling = flag([MEMORY_PROFILING_ENABLED; 2])?
            .filter(|f| f.value)
            .map(|_| interval.unwrap_or(MEMORY_PROFILING_DEFAULT_INTERVAL));
        let slurm = vars
            .first(&[SLURM_JOB_ID])
            .map(|(_, id)| id.trim().to_string());
        Ok(Self {
            enabled: flag(ENABLED)?,
            metrics_enabled: flag(METRICS_ENABLED)?,
            exporter,
            run_id: get(RUN_ID)
                .map(|(_, id)| id)
                .or(slurm)
                .unwrap_or_else(mint_run_id),
            service_name_per_server: flag(SERVICE_NAME_PER_SERVER)?.is_none_or(|f| f.value),
            span_groups,
            memory_profiling,
        })
    }

    /// When a Gym variable explicitly turns export off (`…_ENABLED` or
    /// `…_METRICS_ENABLED` false): that variable and its value, for the log
    /// line. The backend then installs a recorder that records nothing and
    /// exports nothing (no OTLP traffic, no `/metrics` listener).
    ///
    /// ```
    /// use gym_metrics_kit::env::GymEnv;
    /// let env = GymEnv::read(|n| (n == "NEMO_LENS_METRICS_ENABLED").then(|| "off".to_string()))?;
    /// assert_eq!(env.silenced_by().as_deref(), Some("NEMO_LENS_METRICS_ENABLED=\"off\""));
    /// assert_eq!(GymEnv::default().silenced_by(), None);
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn silenced_by(&self) -> Option<String> {
        [&self.enabled, &self.metrics_enabled]
            .into_iter()
            .flatten()
            .find(|flag| !flag.value)
            .map(|flag| format!("{}={:?}", flag.variable, flag.raw))
    }

    /// The exporter Gym's variables ask for, if any.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::env::GymEnv::default().exporter(), None);
    /// ```
    pub fn exporter(&self) -> Option<GymExporter> {
        self.exporter.as_ref().map(|e| e.value)
    }

    /// True when Gym's variables select OTLP: `…_EXPORTER=otlp`, or
    /// `…_ENABLED` true with no exporter named (Gym's default exporter is
    /// OTLP). A backend then uses Gym's default protocol, gRPC, unless
    /// `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL` says otherwise.
    ///
    /// ```
    /// use gym_metrics_kit::env::GymEnv;
    /// let env = GymEnv::read(|n| (n == "NEMO_GYM_OTEL_ENABLED").then(|| "1".to_string()))?;
    /// assert!(env.selects_otlp());
    /// assert!(!GymEnv::default().selects_otlp());
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn selects_otlp(&self) -> bool {
        match self.exporter() {
            Some(exporter) => exporter == GymExporter::Otlp,
            None => self.enabled.as_ref().is_some_and(|f| f.value),
        }
    }

    /// The run id: `…_RUN_ID`, else `SLURM_JOB_ID`, else 12 hex digits
    /// minted for this process (as Gym mints them).
    ///
    /// ```
    /// let id = gym_metrics_kit::env::GymEnv::default().run_id().to_string();
    /// assert_eq!(id.len(), 12);
    /// ```
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The interval between memory samples when a process of `role`
    /// profiles memory, else `None`. As in Gym, only an orchestrator does
    /// (the servers it launched and the host: `gym_metrics_kit::memory`,
    /// feature `process`), only with `NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED`,
    /// and only while telemetry exports (not [silenced](Self::silenced_by)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use gym_metrics_api::Role;
    /// use gym_metrics_kit::env::GymEnv;
    /// let env = GymEnv::read(|n| match n {
    ///     "NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED" => Some("1".to_string()),
    ///     "NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS" => Some("0.5".to_string()),
    ///     _ => None,
    /// })?;
    /// let orchestrator = Role::orchestrator();
    /// assert_eq!(env.memory_profiling(&orchestrator), Some(Duration::from_millis(500)));
    /// assert_eq!(env.memory_profiling(&Role::server("math-0", "resources_servers")), None);
    /// assert_eq!(GymEnv::default().memory_profiling(&orchestrator), None);
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn memory_profiling(&self, role: &Role) -> Option<Duration> {
        let profiles = role.writes_fleet_size() && self.silenced_by().is_none();
        self.memory_profiling.filter(|_| profiles)
    }

    /// The groups this process records: `…_SPAN_GROUPS`, or every group.
    ///
    /// ```
    /// use gym_metrics_api::backend::{SpanGroups};
    /// use gym_metrics_kit::env::GymEnv;
    /// assert_eq!(GymEnv::default().span_groups(), SpanGroups::ALL);
    /// ```
    pub fn span_groups(&self) -> SpanGroups {
        self.span_groups
            .as_ref()
            .map_or(SpanGroups::ALL, |g| g.value)
    }

    /// The resource attributes of a Gym process, in Gym's keys:
    /// `service.name` (`<base>/<server name>`, or `<base>` when
    /// `…_SERVICE_NAME_PER_SERVER` is false), `nemo.gym.service_group`
    /// (`<base>`), `nemo.run.id`, and the role's `nemo.gym.server.name`,
    /// `nemo.gym.server.type` and `gym.role`. `base` is `OTEL_SERVICE_NAME`
    /// (passed as `service_base`), else `nemo-gym`.
    ///
    /// ```
    /// use gym_metrics_kit::env::GymEnv;
    /// use gym_metrics_api::Role;
    /// let env = GymEnv::read(|n| (n == "SLURM_JOB_ID").then(|| "4242".to_string()))?;
    /// let attrs = env.resource_attributes(&Role::server("math-0", "resources_servers"), None);
    /// assert!(attrs.contains(&("service.name", "nemo-gym/math-0".to_string())));
    /// assert!(attrs.contains(&("nemo.gym.service_group", "nemo-gym".to_string())));
    /// assert!(attrs.contains(&("nemo.run.id", "4242".to_string())));
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn resource_attributes(
        &self,
        role: &Role,
        service_base: Option<&str>,
    ) -> Vec<(&'static str, String)> {
        let base = service_base.unwrap_or(Role::DEFAULT_SERVICE_NAME);
        let service_name = if self.service_name_per_server {
            role.service_name(Some(base))
        } else {
            base.to_string()
        };
        let mut attributes = vec![
            ("service.name", service_name),
            (SERVICE_GROUP_ATTRIBUTE, base.to_string()),
            (RUN_ID_ATTRIBUTE, self.run_id.clone()),
        ];
        attributes.extend(role.resource_attributes());
        attributes
    }

    /// The one line a backend logs at install when Gym's settings keep
    /// something from being recorded, saying what and why: nothing exported
    /// (`…_ENABLED` or `…_METRICS_ENABLED` false), or `gym.verify.*` not
    /// recorded (`…_SPAN_GROUPS` without `verify`, e.g. Gym's `default`).
    /// `None` when everything is recorded.
    ///
    /// ```
    /// use gym_metrics_kit::env::GymEnv;
    /// let env = GymEnv::read(|n| (n == "NEMO_GYM_OTEL_SPAN_GROUPS").then(|| "default".to_string()))?;
    /// let line = env.install_notice("gym-metrics-otel").unwrap();
    /// assert!(line.contains("gym.verify.* will not be recorded") && line.contains("\"default\""));
    /// assert_eq!(GymEnv::default().install_notice("gym-metrics-otel"), None);
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn install_notice(&self, backend: &str) -> Option<String> {
        if let Some(cause) = self.silenced_by() {
            return Some(format!(
                "{backend}: {cause}: installed, but recording and exporting nothing \
                 (gym.verify.* and every other gym.* metric will not be recorded); \
                 unset it or set it to true to export"
            ));
        }
        let groups = self.span_groups.as_ref()?;
        (!groups.value.contains(Group::Verify)).then(|| {
            format!(
                "{backend}: gym.verify.* will not be recorded: {}={:?} does not include the \
                 `verify` span group (add `verify`, or use `per_rollout` or `all`)",
                groups.variable, groups.raw
            )
        })
    }

    /// Logs [`GymEnv::install_notice`], if there is one (target `gym_metrics`).
    ///
    /// ```
    /// gym_metrics_kit::env::GymEnv::default().log_install_notice("gym-metrics-prom");
    /// ```
    pub fn log_install_notice(&self, backend: &str) {
        if let Some(line) = self.install_notice(backend) {
            log::warn!(target: "gym_metrics", "{line}");
        }
    }
}

/// 12 lowercase hex digits, fresh per call, the shape of Gym's minted run ids.
fn mint_run_id() -> String {
    new_instance_id().replace('-', "")[..12].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&'static str, &str)]) -> Result<GymEnv, ConfigError> {
        let vars = EnvVars::from_pairs(vars);
        GymEnv::read(|name| vars.get(name))
    }

    /// What nemo-gym 0.7.0's `configure_telemetry_env(TelemetryConfig(enabled=True))`
    /// writes into the environment its children inherit (captured by running it).
    pub(crate) const GYM_CHILD_ENV: [(&str, &str); 12] = [
        ("NEMO_GYM_OTEL_ENABLED", "1"),
        ("NEMO_GYM_OTEL_EXPORTER", "otlp"),
        ("NEMO_GYM_OTEL_INSTRUMENT_AIOHTTP", "1"),
        ("NEMO_GYM_OTEL_LOGS_ENABLED", "0"),
        ("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "0"),
        ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "1.0"),
        ("NEMO_GYM_OTEL_METRICS_ENABLED", "1"),
        ("NEMO_GYM_OTEL_RUN_ID", "c9729c8ca114"),
        ("NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER", "1"),
        ("NEMO_GYM_OTEL_SPAN_GROUPS", "default"),
        ("NEMO_GYM_OTEL_TRACES_ENABLED", "1"),
        ("OTEL_SERVICE_NAME", "nemo-gym"),
    ];

    #[test]
    fn the_environment_gym_hands_its_children_is_read_as_gym_means_it() {
        let env = read(&GYM_CHILD_ENV).unwrap();
        assert_eq!(env.silenced_by(), None);
        assert_eq!(env.exporter(), Some(GymExporter::Otlp));
        assert!(env.selects_otlp());
        assert_eq!(env.run_id(), "c9729c8ca114");
        assert_eq!(env.span_groups(), SpanGroups::DEFAULT_PRESET);
        let notice = env.install_notice("b").unwrap();
        assert!(
            notice.contains("NEMO_GYM_OTEL_SPAN_GROUPS=\"default\""),
            "{notice}"
        );
        let attrs =
            env.resource_attributes(&Role::server("math", "resources_servers"), Some("nemo-gym"));
        assert_eq!(attrs[0], ("service.name", "nemo-gym/math".to_string()));
    }

    #[test]
    fn nothing_set_is_our_default() {
        let env = read(&[]).unwrap();
        assert_eq!(env.silenced_by(), None);
        assert_eq!(env.exporter(), None);
        assert!(!env.selects_otlp());
        assert_eq!(env.span_groups(), SpanGroups::ALL);
        assert_eq!(env.run_id().len(), 12);
        assert!(env.run_id().bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(
            env.run_id(),
            read(&[]).unwrap().run_id(),
            "minted per process"
        );
        assert_eq!(env.install_notice("b"), None);
    }

    #[test]
    fn the_gym_prefix_wins_and_a_blank_one_falls_through() {
        let env = read(&[
            ("NEMO_GYM_OTEL_EXPORTER", "console"),
            ("NEMO_LENS_EXPORTER", "otlp"),
            ("NEMO_GYM_OTEL_RUN_ID", "  "),
            ("NEMO_LENS_RUN_ID", " lens-run "),
            ("SLURM_JOB_ID", "99"),
        ])
        .unwrap();
        assert_eq!(env.exporter(), Some(GymExporter::Console));
        assert_eq!(env.run_id(), "lens-run");
    }

    #[test]
    fn run_id_falls_back_to_slurm() {
        assert_eq!(read(&[("SLURM_JOB_ID", "4242")]).unwrap().run_id(), "4242");
        let env = read(&[("SLURM_JOB_ID", "4242"), ("NEMO_GYM_OTEL_RUN_ID", "r1")]).unwrap();
        assert_eq!(env.run_id(), "r1");
    }

    #[test]
    fn every_boolean_spelling_and_either_switch_silences() {
        for off in ["0", "false", "NO", "Off"] {
            for var in [
                "NEMO_GYM_OTEL_ENABLED",
                "NEMO_LENS_ENABLED",
                "NEMO_GYM_OTEL_METRICS_ENABLED",
                "NEMO_LENS_METRICS_ENABLED",
            ] {
                let env = read(&[(var, off)]).unwrap();
                assert_eq!(env.silenced_by(), Some(format!("{var}={off:?}")));
                let notice = env.install_notice("b").unwrap();
                assert!(
                    notice.contains(var) && notice.contains("nothing"),
                    "{notice}"
                );
            }
        }
        for on in ["1", "TRUE", "yes", "on"] {
            let env = read(&[("NEMO_GYM_OTEL_ENABLED", on)]).unwrap();
            assert_eq!(env.silenced_by(), None);
            assert!(env.selects_otlp(), "Gym's default exporter is OTLP");
        }
    }

    #[test]
    fn exporter_selects_otlp_only_when_it_says_otlp() {
        let env = read(&[
            ("NEMO_GYM_OTEL_ENABLED", "1"),
            ("NEMO_GYM_OTEL_EXPORTER", "console"),
        ]);
        assert!(!env.unwrap().selects_otlp());
        let env = read(&[("NEMO_LENS_EXPORTER", "OTLP")]).unwrap();
        assert_eq!(env.exporter(), Some(GymExporter::Otlp));
        assert!(env.selects_otlp());
    }

    #[test]
    fn bad_values_are_errors_naming_the_variable_that_held_them() {
        let cases = [
            ("NEMO_GYM_OTEL_ENABLED", "maybe"),
            ("NEMO_LENS_ENABLED", "2"),
            ("NEMO_GYM_OTEL_METRICS_ENABLED", "enabled"),
            ("NEMO_LENS_SERVICE_NAME_PER_SERVER", "per-server"),
            ("NEMO_GYM_OTEL_EXPORTER", "prometheus"),
            ("NEMO_LENS_EXPORTER", "none"),
            ("NEMO_GYM_OTEL_SPAN_GROUPS", "checkpoint"),
            ("NEMO_LENS_SPAN_GROUPS", "default,evaluate"),
            ("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "sometimes"),
            ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "0"),
            ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "-1"),
            ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "1s"),
            ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "NaN"),
            ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "inf"),
        ];
        for (var, value) in cases {
            let e = read(&[(var, value)]).unwrap_err();
            assert_eq!(e.variable(), var);
            let text = e.to_string();
            assert!(text.contains(var) && text.contains(value), "{text}");
        }
    }

    #[test]
    fn memory_profiling_is_gyms_switch_and_interval() {
        let on = |vars: &[(&'static str, &str)]| {
            read(vars).unwrap().memory_profiling(&Role::orchestrator())
        };
        assert_eq!(on(&[]), None);
        let enabled = ("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "true");
        assert_eq!(on(&[enabled]), Some(Duration::from_secs(1)));
        let interval = ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "2.5");
        assert_eq!(on(&[enabled, interval]), Some(Duration::from_millis(2500)));
        assert_eq!(on(&[interval]), None);
        assert_eq!(
            on(&[("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "0"), interval]),
            None
        );
        // Silenced: Gym's orchestrator profiles only while it exports.
        assert_eq!(on(&[enabled, ("NEMO_GYM_OTEL_ENABLED", "false")]), None);
        let server = Role::server("math-0", "resources_servers");
        assert_eq!(read(&[enabled]).unwrap().memory_profiling(&server), None);
    }

    #[test]
    fn resource_attributes_use_gyms_keys() {
        let env = read(&[("NEMO_GYM_OTEL_RUN_ID", "run-1")]).unwrap();
        let attrs = env.resource_attributes(&Role::orchestrator(), Some("lab"));
        let expected: Vec<(&str, String)> = [
            ("service.name", "lab/orchestrator"),
            ("nemo.gym.service_group", "lab"),
            ("nemo.run.id", "run-1"),
            ("gym.role", "orchestrator"),
            ("nemo.gym.server.name", "orchestrator"),
            ("nemo.gym.server.type", "orchestrator"),
        ]
        .iter()
        .map(|(k, v)| (*k, v.to_string()))
        .collect();
        assert_eq!(attrs, expected);
    }

    #[test]
    fn service_name_per_server_false_gives_the_bare_base() {
        let env = read(&[("NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER", "0")]).unwrap();
        let attrs = env.resource_attributes(&Role::server("math-0", "resources_servers"), None);
        assert_eq!(attrs[0], ("service.name", "nemo-gym".to_string()));
        assert_eq!(attrs[1], ("nemo.gym.service_group", "nemo-gym".to_string()));
    }

    #[test]
    fn verify_off_is_noticed_with_the_variable_and_value() {
        for spec in ["default", "rollout,job"] {
            let env = read(&[("NEMO_LENS_SPAN_GROUPS", spec)]).unwrap();
            let line = env.install_notice("gym-metrics-prom").unwrap();
            assert!(line.contains("gym.verify.* will not be recorded"), "{line}");
            assert!(
                line.contains(&format!("NEMO_LENS_SPAN_GROUPS={spec:?}")),
                "{line}"
            );
        }
        let env = read(&[("NEMO_GYM_OTEL_SPAN_GROUPS", "per_rollout")]).unwrap();
        assert_eq!(env.install_notice("b"), None);
    }
}
