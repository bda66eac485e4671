//! The OpenTelemetry variables both backends read: the service name and
//! the resource attributes every series or data point carries, and which
//! HTTP semantic conventions to emit.

use crate::env::{parse_choice, parse_key_values, EnvVars};
use crate::ConfigError;

/// `OTEL_SERVICE_NAME` (the base of `service.name`),
/// `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, values percent-encoded),
/// `OTEL_SEMCONV_STABILITY_OPT_IN` and `OTEL_METRICS_EXEMPLAR_FILTER`, as
/// the environment gives them; a blank value counts as unset.
///
/// ```
/// use gym_metrics_kit::env::{EnvVars, OtelEnv};
/// let vars = EnvVars::from_lookup(&OtelEnv::VARIABLES, |name| match name {
///     "OTEL_SERVICE_NAME" => Some(" lab ".to_string()),
///     "OTEL_RESOURCE_ATTRIBUTES" => Some("team=rl".to_string()),
///     "OTEL_SEMCONV_STABILITY_OPT_IN" => Some("http".to_string()),
///     _ => None,
/// });
/// let env = OtelEnv::read(&vars)?;
/// assert_eq!(env.service_name.as_deref(), Some("lab"));
/// assert_eq!(env.resource_attributes, [("team".to_string(), "rl".to_string())]);
/// assert!(!env.http_dup);
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtelEnv {
    /// `OTEL_SERVICE_NAME`, trimmed.
    pub service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES`, decoded; empty when unset.
    pub resource_attributes: Vec<(String, String)>,
    /// Whether `OTEL_SEMCONV_STABILITY_OPT_IN` lists `http/dup`: then the
    /// old `http.server.duration` (ms, the old attribute names) is emitted
    /// beside `http.server.request.duration`, as OpenTelemetry's Python
    /// instrumentations do. Unset, or `http`, means the stable metric only
    /// (where those instrumentations, unset, emit the old one only).
    pub http_dup: bool,
    /// `OTEL_METRICS_EXEMPLAR_FILTER` (`trace_based` when unset).
    pub exemplar_filter: ExemplarFilter,
}

/// Which records may carry an exemplar (`OTEL_METRICS_EXEMPLAR_FILTER`):
/// only a timer's, and only with a span in its context (an exemplar here
/// always names its trace and span).
///
/// ```
/// use gym_metrics_kit::env::ExemplarFilter;
/// assert_eq!(ExemplarFilter::default(), ExemplarFilter::TraceBased);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExemplarFilter {
    /// Records inside a sampled span (the specification's default).
    #[default]
    TraceBased,
    /// Records inside any valid span, sampled or not.
    AlwaysOn,
    /// None.
    AlwaysOff,
}

impl ExemplarFilter {
    /// `OTEL_METRICS_EXEMPLAR_FILTER`'s words: `trace_based`, `always_on`,
    /// `always_off` (case-insensitive).
    ///
    /// # Errors
    /// Any other word, naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_kit::env::ExemplarFilter;
    /// let v = "OTEL_METRICS_EXEMPLAR_FILTER";
    /// assert_eq!(ExemplarFilter::parse(v, "ALWAYS_OFF"), Ok(ExemplarFilter::AlwaysOff));
    /// assert!(ExemplarFilter::parse(v, "sometimes").is_err());
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        let words = [
            ("trace_based", Self::TraceBased),
            ("always_on", Self::AlwaysOn),
            ("always_off", Self::AlwaysOff),
        ];
        parse_choice(variable, value, &words, "")
    }
}

impl OtelEnv {
    /// `OTEL_SERVICE_NAME`.
    pub const SERVICE_NAME: &'static str = "OTEL_SERVICE_NAME";

    /// `OTEL_RESOURCE_ATTRIBUTES`.
    pub const RESOURCE_ATTRIBUTES: &'static str = "OTEL_RESOURCE_ATTRIBUTES";

    /// `OTEL_SEMCONV_STABILITY_OPT_IN`: a comma-separated list of opt-ins,
    /// of which `http` and `http/dup` concern the HTTP metric (the others,
    /// `database` and so on, name conventions nothing here emits).
    pub const SEMCONV_STABILITY_OPT_IN: &'static str = "OTEL_SEMCONV_STABILITY_OPT_IN";

    /// Every variable [`OtelEnv::read`] reads.
    ///
    /// ```
    /// use gym_metrics_kit::env::OtelEnv;
    /// assert!(OtelEnv::VARIABLES.contains(&OtelEnv::SERVICE_NAME));
    /// ```
    pub const VARIABLES: [&'static str; 4] = [
        Self::SERVICE_NAME,
        Self::RESOURCE_ATTRIBUTES,
        Self::SEMCONV_STABILITY_OPT_IN,
        Self::EXEMPLAR_FILTER,
    ];

    /// `OTEL_METRICS_EXEMPLAR_FILTER`: which timed records take their
    /// span as an exemplar ([`ExemplarFilter`]).
    pub const EXEMPLAR_FILTER: &'static str = "OTEL_METRICS_EXEMPLAR_FILTER";

    /// Reads the variables from `vars`.
    ///
    /// # Errors
    /// `OTEL_RESOURCE_ATTRIBUTES` that is not a `key=value` list, or an
    /// `OTEL_SEMCONV_STABILITY_OPT_IN` entry that could name no convention,
    /// naming the variable and the value.
    ///
    /// ```
    /// use gym_metrics_kit::env::{EnvVars, OtelEnv};
    /// let vars = EnvVars::from_lookup(&OtelEnv::VARIABLES, |_| Some("team".to_string()));
    /// let e = OtelEnv::read(&vars).unwrap_err();
    /// assert_eq!(e.variable(), "OTEL_RESOURCE_ATTRIBUTES");
    ///
    /// let vars = EnvVars::from_pairs(&[(OtelEnv::SEMCONV_STABILITY_OPT_IN, "database, http/dup")]);
    /// assert!(OtelEnv::read(&vars)?.http_dup);
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn read(vars: &EnvVars) -> Result<Self, ConfigError> {
        let resource_attributes = match vars.first(&[Self::RESOURCE_ATTRIBUTES]) {
            Some((name, value)) => parse_key_values(name, value)?,
            None => Vec::new(),
        };
        Ok(Self {
            service_name: vars
                .first(&[Self::SERVICE_NAME])
                .map(|(_, name)| name.trim().to_string()),
            resource_attributes,
            http_dup: match vars.first(&[Self::SEMCONV_STABILITY_OPT_IN]) {
                Some((name, list)) => http_dup(name, list)?,
                None => false,
            },
            exemplar_filter: match vars.first(&[Self::EXEMPLAR_FILTER]) {
                Some((name, value)) => ExemplarFilter::parse(name, value)?,
                None => ExemplarFilter::default(),
            },
        })
    }
}

/// Whether the opt-in `list` holds `http/dup`, as the Python
/// instrumentations read it (`_semconv.py`: the entries trimmed, unknown
/// ones and empty ones ignored). An entry no convention could be named
/// (with a character such as `=` or a space) is an error.
fn http_dup(name: &'static str, list: &str) -> Result<bool, ConfigError> {
    let entries: Vec<&str> = list.split(',').map(str::trim).collect();
    let named = |e: &&str| {
        e.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_/.-".contains(c))
    };
    if !entries.iter().all(named) {
        const EXPECTED: &str = "a comma-separated list of opt-ins such as `http` (the stable HTTP metric only, the default here) or `http/dup` (the old one too)";
        return Err(ConfigError::invalid(name, list, EXPECTED));
    }
    Ok(entries.contains(&"http/dup"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dup_is_read_from_any_place_in_the_list_and_a_malformed_entry_is_an_error() {
        let dup = |list| http_dup(OtelEnv::SEMCONV_STABILITY_OPT_IN, list);
        assert_eq!(dup("http/dup"), Ok(true));
        assert_eq!(dup(" database/dup , http/dup "), Ok(true));
        assert_eq!(dup("http"), Ok(false));
        assert_eq!(dup("gen_ai_latest_experimental,,"), Ok(false));
        for bad in ["http=dup", "http dup"] {
            let e = dup(bad).unwrap_err();
            assert_eq!(e.variable(), OtelEnv::SEMCONV_STABILITY_OPT_IN);
            assert!(e.to_string().contains("http/dup"), "{e}");
        }
    }
}
