//! Which `metrics` names a bridge exports, the one rule of both backends:
//! each bridged name becomes the Prometheus family OpenTelemetry's
//! Prometheus rules give it (invalid characters become `_`, then the unit's
//! suffix unless the name already ends with it, then `_total` for a counter
//! unless already there), and a name is refused when that family would
//! write a sample name another family writes: a gym family (the whole
//! catalogue and `target_info`, whatever this process's role, since another
//! process of the fleet may write the family this one does not), or a
//! bridged family of another kind. The Prometheus backend writes the family
//! itself; on the OpenTelemetry path the collector or store (VictoriaMetrics,
//! Prometheus' OTLP receiver) derives the same name, so the same clash would
//! meet there.

use std::collections::HashMap;
use std::fmt;

use crate::naming::{prometheus_name, sanitize_metric_name, unit_suffix, TARGET_INFO_FAMILY};
use gym_metrics_api::backend::{Instrument, InstrumentKind};

/// The Prometheus family of the `metrics` instrument `name` of `kind`
/// recorded in `unit` (UCUM); `None` when nothing of the name is left.
///
/// ```
/// use gym_metrics_api::backend::InstrumentKind;
/// use gym_metrics_kit::bridge::bridged_family_name;
/// assert_eq!(bridged_family_name("jobs.done", None, InstrumentKind::Counter).as_deref(), Some("jobs_done_total"));
/// assert_eq!(bridged_family_name("db.query", Some("s"), InstrumentKind::Histogram).as_deref(), Some("db_query_seconds"));
/// assert_eq!(bridged_family_name("latency_seconds", Some("s"), InstrumentKind::Histogram).as_deref(), Some("latency_seconds"));
/// assert_eq!(bridged_family_name("", None, InstrumentKind::Gauge), None);
/// ```
pub fn bridged_family_name(name: &str, unit: Option<&str>, kind: InstrumentKind) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mut family = sanitize_metric_name(name);
    if let Some(suffix) = unit.and_then(unit_suffix) {
        let suffix = format!("_{suffix}");
        if !family.ends_with(&suffix) {
            family.push_str(&suffix);
        }
    }
    if kind == InstrumentKind::Counter && !family.ends_with("_total") {
        family.push_str("_total");
    }
    Some(family)
}

pub use crate::naming::sample_names;

/// The gym families every process of a fleet may write, by Prometheus name:
/// `target_info`, the exported catalogue, `http.server.request.duration`
/// and the old `http.server.duration` (a process with `http/dup` writes it).
///
/// ```
/// use gym_metrics_kit::bridge::gym_families;
/// let names: Vec<String> = gym_families().into_iter().map(|(name, _)| name).collect();
/// assert!(names.contains(&"gym_verify_completed_total".to_string()));
/// assert!(names.contains(&"gym_servers_active".to_string()));
/// assert!(names.contains(&"target_info".to_string()));
/// assert!(names.contains(&"http_server_duration_milliseconds".to_string()));
/// ```
pub fn gym_families() -> Vec<(String, InstrumentKind)> {
    let mut families = vec![(TARGET_INFO_FAMILY.to_string(), InstrumentKind::Gauge)];
    families.extend(
        Instrument::EXPORTED
            .iter()
            .chain([
                &Instrument::HTTP_SERVER_REQUEST_DURATION,
                &Instrument::HTTP_SERVER_DURATION_OLD,
            ])
            .map(|i| (prometheus_name(i), i.kind)),
    );
    families
}

/// Why a `metrics` name is not exported; its `Display` is the whole log line.
///
/// ```
/// use gym_metrics_api::backend::InstrumentKind;
/// use gym_metrics_kit::bridge::FamilyNames;
/// let refused = FamilyNames::new().claim("gym.verify.completed", None, InstrumentKind::Counter).unwrap_err();
/// assert_eq!(refused.name(), "gym.verify.completed");
/// assert!(refused.to_string().contains("gym_verify_completed_total"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameRefused {
    name: String,
    why: String,
}

impl NameRefused {
    /// Refuses `name` because of `why` (a backend's own reason, e.g. a name
    /// its SDK cannot hold).
    ///
    /// ```
    /// let r = gym_metrics_kit::bridge::NameRefused::new("9lives", "no");
    /// assert!(r.to_string().starts_with("metrics instrument \"9lives\" is not exported: no;"));
    /// ```
    pub fn new(name: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            why: why.into(),
        }
    }

    /// The `metrics` name refused.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::bridge::NameRefused::new("a", "b").name(), "a");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for NameRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "metrics instrument {:?} is not exported: {}; rename it \
             (gym-metrics refuses names that would give Prometheus an exposition it cannot read)",
            self.name, self.why
        )
    }
}

/// The families taken so far, the gym families' and the bridged ones': what
/// decides whether a bridged name is exported, and as which family.
///
/// ```
/// use gym_metrics_api::backend::InstrumentKind;
/// use gym_metrics_kit::bridge::FamilyNames;
/// let mut names = FamilyNames::new();
/// assert_eq!(names.claim("jobs.done", None, InstrumentKind::Counter).as_deref(), Ok("jobs_done_total"));
/// // Again, same kind: the same family.
/// assert_eq!(names.claim("jobs.done", None, InstrumentKind::Counter).as_deref(), Ok("jobs_done_total"));
/// // `jobs_done` as a gauge would write the counter's OpenMetrics name.
/// assert!(names.claim("jobs_done", None, InstrumentKind::Gauge).is_err());
/// assert!(names.claim("target_info", None, InstrumentKind::Gauge).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct FamilyNames {
    /// Every sample name written by a family, by the family writing it.
    taken: HashMap<String, String>,
    /// The bridged families and their kinds.
    bridged: HashMap<String, InstrumentKind>,
}

impl Default for FamilyNames {
    fn default() -> Self {
        Self::new()
    }
}

impl FamilyNames {
    /// Only the [`gym_families`] taken.
    ///
    /// ```
    /// use gym_metrics_api::backend::InstrumentKind;
    /// let mut names = gym_metrics_kit::bridge::FamilyNames::new();
    /// assert!(names.claim("gym.servers.active", None, InstrumentKind::Gauge).is_err());
    /// ```
    pub fn new() -> Self {
        let mut taken = HashMap::new();
        for (family, kind) in gym_families() {
            for sample in sample_names(&family, kind) {
                taken.insert(sample, family.clone());
            }
        }
        Self {
            taken,
            bridged: HashMap::new(),
        }
    }

    /// Takes one more family that bridged names must not meet (one the
    /// backend writes besides the gym families, e.g. process metrics).
    ///
    /// ```
    /// use gym_metrics_api::backend::InstrumentKind;
    /// let mut names = gym_metrics_kit::bridge::FamilyNames::new();
    /// names.take("process_open_fds", InstrumentKind::Gauge);
    /// assert!(names.claim("process.open.fds", None, InstrumentKind::Gauge).is_err());
    /// ```
    pub fn take(&mut self, family: &str, kind: InstrumentKind) {
        for sample in sample_names(family, kind) {
            self.taken
                .entry(sample)
                .or_insert_with(|| family.to_string());
        }
    }

    /// The family the `metrics` instrument `name` of `kind` in `unit`
    /// (UCUM) records into: a bridged family of the same kind already, or a
    /// new one now taken.
    ///
    /// # Errors
    /// [`NameRefused`] when nothing of the name is left for a family, when
    /// its family is already one of another kind, or when one of its sample
    /// names is another family's.
    ///
    /// ```
    /// use gym_metrics_api::backend::InstrumentKind;
    /// let mut names = gym_metrics_kit::bridge::FamilyNames::new();
    /// assert!(names.claim("q", None, InstrumentKind::Gauge).is_ok());
    /// let e = names.claim("q", None, InstrumentKind::Histogram).unwrap_err();
    /// assert!(e.to_string().contains("q is already a gauge family"), "{e}");
    /// ```
    pub fn claim(
        &mut self,
        name: &str,
        unit: Option<&str>,
        kind: InstrumentKind,
    ) -> Result<String, NameRefused> {
        let Some(family) = bridged_family_name(name, unit, kind) else {
            return Err(NameRefused::new(name, "nothing of it is left for a name"));
        };
        match self.bridged.get(&family) {
            Some(&existing) if existing == kind => return Ok(family),
            Some(&existing) => {
                let why = format!("{family} is already a {} family", word(existing));
                return Err(NameRefused::new(name, why));
            }
            None => {}
        }
        let samples = sample_names(&family, kind);
        if let Some(owner) = samples.iter().find_map(|s| self.taken.get(s)) {
            let why = format!("its family {family} would meet the family {owner}");
            return Err(NameRefused::new(name, why));
        }
        for sample in samples {
            self.taken.insert(sample, family.clone());
        }
        self.bridged.insert(family.clone(), kind);
        Ok(family)
    }
}

/// The `# TYPE` word of a kind.
fn word(kind: InstrumentKind) -> &'static str {
    match kind {
        InstrumentKind::Counter => "counter",
        InstrumentKind::Gauge => "gauge",
        InstrumentKind::Histogram => "histogram",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use InstrumentKind::{Counter, Gauge, Histogram};

    #[test]
    fn family_names_follow_the_rules() {
        let f = bridged_family_name;
        assert_eq!(
            f("http.requests", None, Counter).as_deref(),
            Some("http_requests_total")
        );
        assert_eq!(
            f("requests_total", None, Counter).as_deref(),
            Some("requests_total")
        );
        assert_eq!(
            f("sent", Some("By"), Counter).as_deref(),
            Some("sent_bytes_total")
        );
        assert_eq!(f("9lives", None, Gauge).as_deref(), Some("_9lives"));
        assert_eq!(
            f("héllo wörld", None, Gauge).as_deref(),
            Some("h_llo_w_rld")
        );
        assert_eq!(f("queue", Some("{item}"), Gauge).as_deref(), Some("queue"));
    }

    #[test]
    fn every_gym_family_and_its_sample_names_are_refused() {
        for (family, kind) in gym_families() {
            for sample in sample_names(&family, kind) {
                for k in [Counter, Gauge, Histogram] {
                    let mut names = FamilyNames::new();
                    if let Ok(got) = names.claim(&sample, None, k) {
                        panic!("{sample} as a {k:?} became {got}, beside {family}");
                    }
                }
            }
        }
        // The catalogue's own OpenTelemetry names clash too.
        let mut names = FamilyNames::new();
        let http = [
            Instrument::HTTP_SERVER_REQUEST_DURATION,
            Instrument::HTTP_SERVER_DURATION_OLD,
        ];
        for i in Instrument::EXPORTED.iter().chain(&http) {
            assert!(names.claim(i.name, i.unit, i.kind).is_err(), "{}", i.name);
        }
    }

    #[test]
    fn a_refused_name_takes_nothing() {
        let mut names = FamilyNames::new();
        assert!(names.claim("x", None, Gauge).is_ok());
        assert!(names.claim("x", None, Histogram).is_err());
        assert!(names.claim("x_bucket", None, Gauge).is_ok());
    }
}
