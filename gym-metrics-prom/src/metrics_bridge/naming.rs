//! `metrics` labels as Prometheus labels, by the OpenTelemetry
//! specification's Prometheus rules, made strict enough that Prometheus
//! accepts every result (family names are the API's one rule for both
//! backends, `gym_metrics_kit::bridge::FamilyNames`):
//!
//! - a label name: the API's one rule (`gym_metrics_kit::naming::sanitize_label_name`:
//!   every character but ASCII letters, digits and `_` becomes `_`, runs of
//!   `_` become one so nothing starts with the reserved `__`, a leading digit
//!   or an empty name gets `key_`); then a label that would be one the
//!   exporter writes itself (`otel_scope_name`, `otel_scope_version`,
//!   `otel_metric_overflow`, a histogram's `le`) gets `key_` before it;
//! - labels that translate to the same name are one label whose value is
//!   their values joined by `;` in the order of their original keys, as
//!   OpenTelemetry's exporter merges them.

use std::collections::BTreeMap;

use gym_metrics_api::backend::InstrumentKind as Kind;

/// Labels the exporter writes on every bridged series.
const EXPORTER_LABELS: [&str; 3] = [
    "otel_scope_name",
    "otel_scope_version",
    "otel_metric_overflow",
];

/// The label name for the `metrics` label key `key` on a family of `kind`:
/// the one label-name rule ([`gym_metrics_kit::naming::sanitize_label_name`],
/// also used for resource attributes), then `key_` before a name the
/// exporter writes itself (a scope label, the overflow marker, a
/// histogram's `le`).
pub(crate) fn label_name(key: &str, kind: Kind) -> String {
    let mut name = gym_metrics_kit::naming::sanitize_label_name(key);
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
