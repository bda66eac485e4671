//! Text helpers of the checks: rules-file names, PromQL thresholds and names, Grafana
//! variables and legends, label sets of samples.

use std::collections::BTreeSet;

use crate::sample::Sample;

/// The names after `- record:` and `- alert:` in a rules file, in file order. Repeats are
/// kept: one record name may have several rules (one per quantile).
pub fn rule_names(rules_yaml: &str) -> (Vec<String>, Vec<String>) {
    let mut records = Vec::new();
    let mut alerts = Vec::new();
    for line in rules_yaml.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("- record:") {
            records.push(name.trim().to_string());
        } else if let Some(name) = line.strip_prefix("- alert:") {
            alerts.push(name.trim().to_string());
        }
    }
    (records, alerts)
}

/// Splits `LHS OP NUMBER` (the form of a threshold alert) into its parts; `None` for any
/// other form.
pub(crate) fn split_threshold(expr: &str) -> Option<(&str, &str, f64)> {
    let expr = expr.trim_end();
    let start = expr
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-')))
        .map(|i| i + 1)?;
    let number: f64 = expr[start..].parse().ok()?;
    let rest = expr[..start].trim_end();
    let op = ["<=", ">=", "==", "!=", "<", ">"]
        .into_iter()
        .find(|op| rest.ends_with(op))?;
    Some((rest[..rest.len() - op.len()].trim_end(), op, number))
}

/// Whether `v OP threshold` holds, for an `op` from [`split_threshold`] (any other counts
/// as `!=`).
pub(crate) fn compare(v: f64, op: &str, threshold: f64) -> bool {
    match op {
        "<" => v < threshold,
        ">" => v > threshold,
        "<=" => v <= threshold,
        ">=" => v >= threshold,
        "==" => v == threshold,
        _ => v != threshold,
    }
}

/// Names in `expr` that look like ours (`gym_` in them, or `target_info`) but are not in
/// `known`. A typo in a branch that returns nothing would pass unseen otherwise. A
/// histogram's own name (its native series) counts as known where its `_bucket` is: a
/// Prometheus without native histograms holds only the classic series.
pub(crate) fn unknown_names(expr: &str, known: &BTreeSet<String>) -> Vec<String> {
    // Blank out quoted strings (label values).
    let mut unquoted = String::new();
    let mut rest = expr;
    while let Some(i) = rest.find('"') {
        unquoted.push_str(&rest[..i]);
        unquoted.push(' ');
        rest = &rest[i + 1..];
        rest = rest.find('"').map_or("", |j| &rest[j + 1..]);
    }
    unquoted.push_str(rest);
    unquoted
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|t| (t.contains("gym_") || *t == "target_info") && !known.contains(*t))
        .filter(|t| !known.contains(&format!("{t}_bucket")))
        .map(str::to_string)
        .collect()
}

/// Grafana's variables set as the checks set them: `$job` and `${job}` become `job`,
/// `$__rate_interval` becomes `rate_interval`.
pub(crate) fn substitute(expr: &str, job: &str, rate_interval: &str) -> String {
    expr.replace("$__rate_interval", rate_interval)
        .replace("${job}", job)
        .replace("$job", job)
}

/// The `{{label}}` placeholders of a Grafana legend format, trimmed, in order.
pub(crate) fn legend_labels(format: &str) -> Vec<String> {
    format
        .split("{{")
        .skip(1)
        .filter_map(|part| part.split_once("}}").map(|(l, _)| l.trim().to_string()))
        .collect()
}

/// The label names of `s`, `__name__` left out.
pub(crate) fn label_keys(s: &Sample) -> BTreeSet<String> {
    s.labels
        .keys()
        .filter(|k| k.as_str() != "__name__")
        .cloned()
        .collect()
}

/// The `job`s of `result`.
pub(crate) fn jobs_of(result: &[Sample]) -> BTreeSet<String> {
    result
        .iter()
        .filter_map(|s| s.labels.get("job").cloned())
        .collect()
}

/// The set of `items`.
pub(crate) fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_lists_records_and_alerts_in_file_order() {
        let yaml =
            "groups:\n  - name: g\n    rules:\n      - record: job:a:rate5m\n        expr: x\n\
                    \x20     - alert: AHigh\n        expr: y > 1\n      - record: job:a:rate5m\n";
        let (records, alerts) = rule_names(yaml);
        assert_eq!(records, ["job:a:rate5m", "job:a:rate5m"]);
        assert_eq!(alerts, ["AHigh"]);
    }

    #[test]
    fn threshold_expressions_split() {
        assert_eq!(
            split_threshold("job:x:rate5m < 0.8"),
            Some(("job:x:rate5m", "<", 0.8))
        );
        assert_eq!(
            split_threshold("count by (job) (a) > 1"),
            Some(("count by (job) (a)", ">", 1.0))
        );
        assert_eq!(
            split_threshold("x{quantile=\"0.95\"} > 1.2e+06"),
            Some(("x{quantile=\"0.95\"}", ">", 1_200_000.0))
        );
        assert_eq!(split_threshold("a >= -2 "), Some(("a", ">=", -2.0)));
        assert_eq!(
            split_threshold("(up and on (job) y) == 0").map(|t| t.1),
            Some("==")
        );
        assert_eq!(split_threshold("a != 3").map(|t| t.1), Some("!="));
        assert_eq!(split_threshold("a or absent(b)"), None);
        assert_eq!(split_threshold("rate(a[5m]) * 0"), None);
        assert_eq!(split_threshold("1"), None);
    }

    #[test]
    fn compare_applies_each_operator() {
        assert!(compare(0.5, "<", 0.8) && !compare(0.8, "<", 0.8));
        assert!(compare(0.9, ">", 0.8) && !compare(0.8, ">", 0.8));
        assert!(compare(0.8, "<=", 0.8) && !compare(0.9, "<=", 0.8));
        assert!(compare(0.8, ">=", 0.8) && !compare(0.7, ">=", 0.8));
        assert!(compare(0.0, "==", 0.0) && !compare(1.0, "==", 0.0));
        assert!(compare(1.0, "!=", 0.0) && !compare(0.0, "!=", 0.0));
    }

    #[test]
    fn unknown_names_finds_a_typo_but_not_label_values_or_known_names() {
        let known = set(&[
            "gym_verify_completed_total",
            "gym_verify_duration_ms_milliseconds_bucket",
            "nemo_gym_server_name",
            "target_info",
        ]);
        let native = "rate(gym_verify_duration_ms_milliseconds[1m]) or rate(gym_verify_duration_ms_millisecond[1m])";
        assert_eq!(
            unknown_names(native, &known),
            ["gym_verify_duration_ms_millisecond"]
        );
        assert_eq!(
            unknown_names(
                "sum(gym_verify_completed_totl{a=\"gym_x\"}) * on (job) group_left (nemo_gym_server_name) target_info",
                &known
            ),
            ["gym_verify_completed_totl"]
        );
        assert_eq!(
            unknown_names("job:gym_rollouts:rate5m or target_infos", &known),
            ["job:gym_rollouts:rate5m"]
        );
        assert!(
            unknown_names("up{job=\"gym_fleet\"} + process_cpu_seconds_total", &known).is_empty()
        );
    }

    #[test]
    fn substitute_sets_job_and_rate_interval() {
        assert_eq!(
            substitute(
                "rate(x{job=\"$job\"}[$__rate_interval]) / y{job=\"${job}\"}",
                "gym-fleet",
                "1m"
            ),
            "rate(x{job=\"gym-fleet\"}[1m]) / y{job=\"gym-fleet\"}"
        );
        assert_eq!(substitute("$other", "gym-fleet", "1m"), "$other");
    }

    #[test]
    fn legend_labels_are_the_placeholders() {
        assert_eq!(
            legend_labels("{{nemo_gym_server_name}} {{ instance }} p95"),
            ["nemo_gym_server_name", "instance"]
        );
        assert!(legend_labels("p95 {not a placeholder}").is_empty());
    }
}
