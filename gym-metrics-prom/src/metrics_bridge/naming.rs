//! `metrics` names and labels as Prometheus names and labels, by the
//! OpenTelemetry specification's Prometheus rules, made strict enough that
//! Prometheus accepts every result:
//!
//! - a family name: invalid characters become `_` (a leading digit gets a
//!   `_` before it), then the unit's suffix (`_seconds`, `_bytes`, …) unless
//!   the name already ends with it, then, for a counter, `_total` unless the
//!   name already ends with it;
//! - a label name: the crate's one rule (`crate::naming::sanitize_label_name`:
//!   every character but ASCII letters, digits and `_` becomes `_`, runs of
//!   `_` become one so nothing starts with the reserved `__`, a leading digit
//!   or an empty name gets `key_`); then a label that would be one the
//!   exporter writes itself (`otel_scope_name`, `otel_scope_version`,
//!   `otel_metric_overflow`, a histogram's `le`) gets `key_` before it;
//! - labels that translate to the same name are one label whose value is
//!   their values joined by `;` in the order of their original keys, as
//!   OpenTelemetry's exporter merges them.

use std::collections::BTreeMap;

use crate::families::Kind;
pub(crate) use crate::naming::sample_names;
use crate::naming::{sanitize_metric_name, unit_suffix};

/// Labels the exporter writes on every bridged series.
const EXPORTER_LABELS: [&str; 3] = [
    "otel_scope_name",
    "otel_scope_version",
    "otel_metric_overflow",
];

/// The family name of the `metrics` instrument `name` of `kind` recorded in
/// `unit` (UCUM); `None` when nothing of the name is left to name a family.
pub(crate) fn family_name(name: &str, unit: Option<&str>, kind: Kind) -> Option<String> {
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
    if kind == Kind::Counter && !family.ends_with("_total") {
        family.push_str("_total");
    }
    Some(family)
}

/// The label name for the `metrics` label key `key` on a family of `kind`:
/// the crate's one label-name rule ([`crate::naming::sanitize_label_name`],
/// also used for resource attributes), then `key_` before a name the
/// exporter writes itself (a scope label, the overflow marker, a
/// histogram's `le`).
pub(crate) fn label_name(key: &str, kind: Kind) -> String {
    let mut name = crate::naming::sanitize_label_name(key);
    if EXPORTER_LABELS.contains(&name.as_str()) || (kind == Kind::Histogram && name == "le") {
        name.insert_str(0, "key_");
    }
    name
}

/// The series labels for the `metrics` labels `labels`: translated, merged
/// where names meet, sorted by name.
pub(crate) fn series_labels<'a>(
    labels: impl Iterator<Item = (&'a str, &'a str)>,
    kind: Kind,
) -> Vec<(String, String)> {
    let mut by_name: BTreeMap<String, Vec<(&str, &str)>> = BTreeMap::new();
    for (key, value) in labels {
        by_name
            .entry(label_name(key, kind))
            .or_default()
            .push((key, value));
    }
    by_name
        .into_iter()
        .map(|(name, mut values)| {
            values.sort_by(|a, b| a.0.cmp(b.0));
            let joined: Vec<&str> = values.into_iter().map(|(_, v)| v).collect();
            (name, joined.join(";"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_names_follow_the_rules() {
        let f = |n, u, k| family_name(n, u, k);
        assert_eq!(
            f("http.requests", None, Kind::Counter).as_deref(),
            Some("http_requests_total")
        );
        assert_eq!(
            f("requests_total", None, Kind::Counter).as_deref(),
            Some("requests_total")
        );
        assert_eq!(
            f("db.query", Some("s"), Kind::Histogram).as_deref(),
            Some("db_query_seconds")
        );
        assert_eq!(
            f("latency_seconds", Some("s"), Kind::Histogram).as_deref(),
            Some("latency_seconds")
        );
        assert_eq!(
            f("sent", Some("By"), Kind::Counter).as_deref(),
            Some("sent_bytes_total")
        );
        assert_eq!(f("9lives", None, Kind::Gauge).as_deref(), Some("_9lives"));
        assert_eq!(
            f("héllo wörld", None, Kind::Gauge).as_deref(),
            Some("h_llo_w_rld")
        );
        assert_eq!(
            f("queue", Some("{item}"), Kind::Gauge).as_deref(),
            Some("queue")
        );
        assert_eq!(f("", None, Kind::Gauge), None);
    }

    #[test]
    fn label_names_are_always_valid_and_never_the_exporters_own() {
        assert_eq!(label_name("http.method", Kind::Counter), "http_method");
        assert_eq!(label_name("a:b", Kind::Counter), "a_b");
        assert_eq!(label_name("1st", Kind::Counter), "key_1st");
        assert_eq!(label_name("", Kind::Counter), "key_");
        assert_eq!(label_name("__name__", Kind::Counter), "_name_");
        assert_eq!(
            label_name("otel.scope.name", Kind::Gauge),
            "key_otel_scope_name"
        );
        assert_eq!(label_name("le", Kind::Histogram), "key_le");
        assert_eq!(label_name("le", Kind::Counter), "le");
    }

    #[test]
    fn labels_meeting_on_one_name_are_merged_in_key_order() {
        let labels = [("b", "2"), ("a_b", "y"), ("a.b", "x")];
        assert_eq!(
            series_labels(labels.into_iter(), Kind::Counter),
            [
                ("a_b".to_string(), "x;y".to_string()),
                ("b".to_string(), "2".to_string())
            ]
        );
    }
}
