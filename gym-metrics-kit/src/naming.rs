//! Prometheus names, converted exactly as OpenTelemetry's Prometheus
//! exporter converts them: invalid characters become `_`, the unit's
//! Prometheus word is appended (even after `_ms`), and counters get
//! `_total`. The Prometheus backend names its families by these rules, and
//! both backends' `metrics` bridges check a bridged name against the
//! gym families by them (`bridge::FamilyNames`), so that a name is
//! refused on both paths or on neither.

use gym_metrics_api::backend::{Instrument, InstrumentKind};

/// The family OpenTelemetry's Prometheus exporter writes the resource into
/// (a gauge of value 1, the resource attributes as labels).
pub const TARGET_INFO_FAMILY: &str = "target_info";

/// The Prometheus family name OpenTelemetry's exporter gives `instrument`.
///
/// ```
/// use gym_metrics_api::backend::{Instrument};
/// use gym_metrics_kit::naming::prometheus_name;
/// assert_eq!(prometheus_name(&Instrument::VERIFY_COMPLETED), "gym_verify_completed_total");
/// assert_eq!(prometheus_name(&Instrument::ROLLOUT_DURATION), "gym_rollout_duration_ms_milliseconds");
/// ```
pub fn prometheus_name(instrument: &Instrument) -> String {
    let mut name = sanitize_metric_name(instrument.name);
    if let Some(word) = instrument.unit.and_then(unit_suffix) {
        name.push('_');
        name.push_str(&word);
    }
    if instrument.kind == InstrumentKind::Counter {
        name.push_str("_total");
    }
    name
}

/// Replaces every character a Prometheus metric name cannot hold with `_`
/// (a leading digit gets a `_` prefix).
///
/// ```
/// assert_eq!(gym_metrics_kit::naming::sanitize_metric_name("9jobs.done"), "_9jobs_done");
/// ```
pub fn sanitize_metric_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push('_');
    }
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            c
        } else {
            '_'
        }
    }));
    out
}

/// The Prometheus label name for an OpenTelemetry attribute key, by the
/// OpenTelemetry-to-Prometheus rules, so that a scrape is never refused for
/// a label name (`[a-zA-Z_][a-zA-Z0-9_]*`, nothing reserved): every character
/// outside `[a-zA-Z0-9_]` (`:` included) becomes `_`, a run of `_` becomes
/// one (so no name starts with the reserved `__`, and `__name__` cannot be
/// forged), and a name that would start with a digit, or be empty, gets the
/// prefix `key_`. Keys that meet after this are merged by the caller.
///
/// ```
/// assert_eq!(gym_metrics_kit::naming::sanitize_label_name("__name__"), "_name_");
/// assert_eq!(gym_metrics_kit::naming::sanitize_label_name("1st"), "key_1st");
/// ```
pub fn sanitize_label_name(key: &str) -> String {
    let mut name = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert_str(0, "key_");
    }
    name
}

/// The Prometheus suffix for a UCUM unit, as OpenTelemetry's exporter
/// derives it: a known unit's word (`ms` is `milliseconds`), `a/b` as
/// `a_per_b` (`per_b` when `a` is a count or a time), nothing for
/// annotations such as `{request}` or units it does not know.
///
/// ```
/// use gym_metrics_kit::naming::unit_suffix;
/// assert_eq!(unit_suffix("s").as_deref(), Some("seconds"));
/// assert_eq!(unit_suffix("{request}"), None);
/// ```
pub fn unit_suffix(unit: &str) -> Option<String> {
    if let Some(word) = unit_word(unit) {
        return Some(word.to_string());
    }
    const NOT_BEFORE_PER: [&str; 8] = ["1", "d", "h", "min", "s", "ms", "us", "ns"];
    let (first, second) = unit.split_once('/')?;
    let per = per_unit_word(second)?;
    match unit_word(first) {
        Some(word) if !NOT_BEFORE_PER.contains(&first) => Some(format!("{word}_per_{per}")),
        _ => Some(format!("per_{per}")),
    }
}

/// The Prometheus word for a UCUM unit, for the units OpenTelemetry maps.
fn unit_word(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "d" => "days",
        "h" => "hours",
        "min" => "minutes",
        "s" => "seconds",
        "ms" => "milliseconds",
        "us" => "microseconds",
        "ns" => "nanoseconds",
        "By" | "B" => "bytes",
        "KiBy" => "kibibytes",
        "MiBy" => "mebibytes",
        "GiBy" => "gibibytes",
        "TiBy" => "tibibytes",
        "KBy" | "KB" => "kilobytes",
        "MBy" | "MB" => "megabytes",
        "GBy" | "GB" => "gigabytes",
        "TBy" | "TB" => "terabytes",
        "m" => "meters",
        "V" => "volts",
        "A" => "amperes",
        "J" => "joules",
        "W" => "watts",
        "g" => "grams",
        "Cel" => "celsius",
        "Hz" => "hertz",
        "1" => "ratio",
        "%" => "percent",
        _ => return None,
    })
}

/// The word after `per_` for the denominator of a UCUM unit.
fn per_unit_word(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "s" => "second",
        "m" => "minute",
        "h" => "hour",
        "d" => "day",
        "w" => "week",
        "mo" => "month",
        "y" => "year",
        _ => return None,
    })
}

/// The sample names a family of `kind` called `family` writes, and in
/// OpenMetrics the family name a counter goes by (and the `_total` samples
/// of a counter named without it): a family whose names meet another's
/// would make an exposition Prometheus refuses. The one rule for every
/// family written after ours (the `metrics` bridges', an application
/// registry's).
///
/// ```
/// use gym_metrics_api::backend::{InstrumentKind};
/// use gym_metrics_kit::naming::sample_names;
/// assert_eq!(sample_names("jobs_total", InstrumentKind::Counter), ["jobs_total", "jobs"]);
/// assert_eq!(sample_names("jobs", InstrumentKind::Counter), ["jobs", "jobs_total"]);
/// assert_eq!(sample_names("t", InstrumentKind::Histogram), ["t", "t_bucket", "t_sum", "t_count"]);
/// ```
pub fn sample_names(family: &str, kind: InstrumentKind) -> Vec<String> {
    let mut names = vec![family.to_string()];
    match kind {
        InstrumentKind::Counter => match family.strip_suffix("_total") {
            Some(stem) => names.push(stem.to_string()),
            None => names.push(format!("{family}_total")),
        },
        InstrumentKind::Gauge => {}
        InstrumentKind::Histogram => {
            for suffix in ["_bucket", "_sum", "_count"] {
                names.push(format!("{family}{suffix}"));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use gym_metrics_api::backend::Instrument;

    #[test]
    fn every_exported_name_matches_the_contract() {
        let names: Vec<String> = Instrument::EXPORTED.iter().map(prometheus_name).collect();
        assert_eq!(
            names,
            [
                "gym_rollout_duration_ms_milliseconds",
                "gym_verify_duration_ms_milliseconds",
                "gym_verify_success_rate",
                "gym_servers_active",
                "gym_verify_completed_total",
                "gym_verify_succeeded_total",
            ]
        );
    }

    #[test]
    fn sample_names_hold_every_name_a_family_writes_in_either_format() {
        use InstrumentKind::{Counter, Gauge, Histogram};
        assert_eq!(sample_names("a_total", Counter), ["a_total", "a"]);
        assert_eq!(sample_names("a", Counter), ["a", "a_total"]);
        assert_eq!(sample_names("g", Gauge), ["g"]);
        assert_eq!(
            sample_names("h", Histogram),
            ["h", "h_bucket", "h_sum", "h_count"]
        );
    }

    #[test]
    fn sanitizes_like_opentelemetry() {
        assert_eq!(sanitize_metric_name("1a.b-c:d"), "_1a_b_c:d");
        assert_eq!(sanitize_label_name("gym.server.name"), "gym_server_name");
        assert_eq!(unit_suffix("{request}"), None);
        assert_eq!(unit_suffix("By").as_deref(), Some("bytes"));
        assert_eq!(unit_suffix("m/s").as_deref(), Some("meters_per_second"));
        assert_eq!(unit_suffix("1/s").as_deref(), Some("per_second"));
        assert_eq!(unit_suffix("bit/s").as_deref(), Some("per_second"));
        assert_eq!(unit_suffix("x/q"), None);
    }

    #[test]
    fn label_names_are_always_valid_and_never_reserved() {
        for (key, name) in [
            ("1team", "key_1team"),
            ("9", "key_9"),
            ("", "key_"),
            ("k8s:pod", "k8s_pod"),
            (":x", "_x"),
            ("__name__", "_name_"),
            ("__meta_kubernetes", "_meta_kubernetes"),
            ("a..b", "a_b"),
            ("_private", "_private"),
            ("日本.team", "_team"),
            ("-1", "_1"),
            ("Team_A", "Team_A"),
        ] {
            assert_eq!(sanitize_label_name(key), name, "{key:?}");
        }
    }
}
