//! The rules checks: Prometheus loaded exactly the rules of the file, and every recording
//! and alerting rule returns what the fleet and its fault jobs imply.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::expr::{compare, jobs_of, label_keys, rule_names, set, split_threshold, unknown_names};
use super::Check;
use crate::sample::Sample;

type Labels = BTreeMap<String, String>;

/// Checks every rule of `api` (the JSON of `/api/v1/rules`) against `rules_yaml` and the fleet.
pub(super) fn check_rules(
    check: &Check,
    api: &Value,
    rules_yaml: &str,
    problems: &mut Vec<String>,
    report: &mut Vec<String>,
) {
    let loaded: Vec<&Value> = api["data"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .collect();

    // Prometheus loaded exactly the rules of the file.
    let (records, alerts) = rule_names(rules_yaml);
    let mut in_file: Vec<String> = records.iter().chain(&alerts).cloned().collect();
    let mut in_prometheus: Vec<String> = loaded
        .iter()
        .map(|r| r["name"].as_str().unwrap_or_default().to_string())
        .collect();
    in_file.sort();
    in_prometheus.sort();
    if in_file != in_prometheus {
        problems.push(format!(
            "rules loaded {in_prometheus:?} != rules in the file {in_file:?}"
        ));
    }

    for rule in &loaded {
        let name = rule["name"].as_str().unwrap_or_default();
        let expr = rule["query"].as_str().unwrap_or_default();
        if rule["health"] != "ok" {
            problems.push(format!(
                "{name}: health {} ({})",
                rule["health"], rule["lastError"]
            ));
            continue;
        }
        let result = match (check.query)(expr) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        let before = problems.len();
        for unknown in unknown_names(expr, check.known) {
            problems.push(format!(
                "{name}: reads {unknown:?}, which Prometheus does not hold"
            ));
        }
        if rule["type"] == "recording" {
            check_recording(check, rule, &result, problems);
        } else {
            check_alert(check, rule, &result, problems);
        }
        if problems.len() == before {
            report.push(format!(
                "ok  {:9} {name}{}: {} series, jobs {:?}",
                rule["type"].as_str().unwrap_or_default(),
                rule_labels(rule),
                result.len(),
                jobs_of(&result)
            ));
        }
    }
}

/// A rule's own labels as `{k="v",...}`, or nothing.
fn rule_labels(rule: &Value) -> String {
    match rule["labels"].as_object() {
        Some(l) if !l.is_empty() => format!(
            "{{{}}}",
            l.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => String::new(),
    }
}

/// A recording rule: its expression returns, for the healthy fleet, series with exactly
/// the labels its level promises (`job:`, `instance:`, `job_le:`, `instance_le:`, and per
/// HTTP route `job_route:`, `job_route_le:`), one per
/// server of the kind that records the instrument, with sensible values; and Prometheus has
/// stored its result.
fn check_recording(check: &Check, rule: &Value, result: &[Sample], problems: &mut Vec<String>) {
    let topo = check.topo;
    let fleet_job = topo.fleet_job.as_str();
    let name = rule["name"].as_str().unwrap_or_default();
    let extra: BTreeMap<String, String> = rule["labels"]
        .as_object()
        .map(|l| {
            l.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let level = name.split(':').next().unwrap_or_default();
    let mut want_keys: BTreeSet<String> = match level {
        "job" => set(&["job"]),
        "instance" => set(&["job", "instance"]),
        "job_le" => set(&["job", "le"]),
        "instance_le" => set(&["job", "instance", "le"]),
        // The HTTP rules, per route: a route's requests by method and status, its
        // buckets by status.
        "job_route" => set(&[
            "job",
            "http_route",
            "http_request_method",
            "http_response_status_code",
        ]),
        "job_route_le" => set(&["job", "http_route", "http_response_status_code", "le"]),
        other => return problems.push(format!("{name}: unknown level {other:?}")),
    };
    // The rule's own labels (quantile) are added by Prometheus when recording, not by
    // the expression.
    let fleet: Vec<&Sample> = result
        .iter()
        .filter(|s| s.labels.get("job").map(String::as_str) == Some(fleet_job))
        .collect();
    if fleet.is_empty() {
        return problems.push(format!(
            "{name}: no series for job {fleet_job} (got {result:?})"
        ));
    }
    for s in result {
        if label_keys(s) != want_keys {
            problems.push(format!("{name}: labels {:?}, want {want_keys:?}", s.labels));
        }
    }
    let kind_instances = if name.contains("rollout") {
        &topo.agents
    } else {
        &topo.resources
    };
    // Throughput: every process exports the verify counters (at 0 where nothing is
    // verified), so a per-server rate may be 0; the busy ones must be exactly the servers
    // of the kind. Ratios, buckets and quantiles exist only where there are observations.
    let throughput = name.contains(":gym_rollouts:") || name.contains(":gym_verifications:");
    if want_keys.contains("instance") {
        let got: BTreeSet<String> = fleet
            .iter()
            .filter(|s| !throughput || s.value > 0.0)
            .filter_map(|s| s.labels.get("instance").cloned())
            .collect();
        if &got != kind_instances {
            problems.push(format!(
                "{name}: {}instances {got:?} in {fleet_job}, want every {} {kind_instances:?}",
                if throughput { "busy " } else { "" },
                if name.contains("rollout") {
                    "agent"
                } else {
                    "resources server"
                }
            ));
        }
    }
    if want_keys.contains("le")
        && !fleet
            .iter()
            .any(|s| s.labels.get("le").map(String::as_str) == Some("+Inf"))
    {
        problems.push(format!("{name}: no le=\"+Inf\" bucket"));
    }
    for s in &fleet {
        let v = s.value;
        let bad = if name.contains("success_ratio") {
            !(0.0..=1.0).contains(&v)
        } else if name.contains("quantile") {
            !(v > 0.0 && v <= 3_600_000.0)
        } else if name.contains("servers_active") {
            v != topo.resources.len() as f64
        } else if name.contains("bucket") {
            !(v.is_finite() && v >= 0.0)
        } else if level == "job" {
            // Throughput of a busy fleet.
            !(v.is_finite() && v > 0.0)
        } else {
            // Per server: 0 for a process of the other kind (see above).
            !(v.is_finite() && v >= 0.0)
        };
        if bad {
            problems.push(format!("{name}: implausible value {v} for {:?}", s.labels));
        }
    }

    // Prometheus stored the recorded series, with the rule's labels.
    want_keys.extend(extra.keys().cloned());
    let mut selector = format!("{name}{{job=\"{fleet_job}\"");
    for (k, v) in &extra {
        selector.push_str(&format!(",{k}=\"{v}\""));
    }
    selector.push('}');
    match (check.query)(&selector) {
        Ok(stored) if stored.is_empty() => {
            problems.push(format!("{name}: nothing recorded ({selector})"))
        }
        Ok(stored) => {
            for s in stored {
                if label_keys(&s) != want_keys {
                    problems.push(format!(
                        "{name}: recorded labels {:?}, want {want_keys:?}",
                        s.labels
                    ));
                }
            }
        }
        Err(e) => problems.push(format!("{name}: {e}")),
    }
}

/// An alerting rule: its expression runs; a threshold alert matches exactly the series of
/// its left-hand side that cross the threshold (and that side has data for the fleet); it
/// matches what [`super::Topology::alerts`] expects; Prometheus itself holds the same
/// alerts (pending: every alert has a `for`) with rendered annotations.
fn check_alert(check: &Check, rule: &Value, result: &[Sample], problems: &mut Vec<String>) {
    let fleet_job = check.topo.fleet_job.as_str();
    let name = rule["name"].as_str().unwrap_or_default();
    let expr = rule["query"].as_str().unwrap_or_default();
    let key = |s: &Sample| {
        let mut l = s.labels.clone();
        l.remove("__name__");
        l
    };
    let got: BTreeSet<Labels> = result.iter().map(key).collect();

    if let Some((lhs, op, threshold)) = split_threshold(expr) {
        match (check.query)(lhs) {
            Err(e) => problems.push(format!("{name}: left-hand side: {e}")),
            Ok(l) if !jobs_of(&l).contains(fleet_job) => problems.push(format!(
                "{name}: left-hand side `{lhs}` has no data for {fleet_job}: {l:?}"
            )),
            Ok(l) => {
                let want: BTreeSet<Labels> = l
                    .iter()
                    .filter(|s| compare(s.value, op, threshold))
                    .map(key)
                    .collect();
                if want != got {
                    problems.push(format!(
                        "{name}: matched {got:?}, but `{lhs}` {op} {threshold} holds for {want:?}"
                    ));
                }
            }
        }
    }

    // What the fleet and the fault jobs must trigger.
    let jobs = jobs_of(result);
    match check.topo.alerts.get(name) {
        None => problems.push(format!(
            "{name}: no expectation in this test for this alert"
        )),
        Some(want) => {
            if want.jobs != jobs {
                problems.push(format!(
                    "{name}: matches jobs {jobs:?}, want {:?}",
                    want.jobs
                ));
            }
            if let Some(want_instances) = &want.instances {
                let instances: BTreeSet<String> = result
                    .iter()
                    .filter_map(|s| s.labels.get("instance").cloned())
                    .collect();
                if &instances != want_instances {
                    problems.push(format!(
                        "{name}: instances {instances:?}, want only {want_instances:?}"
                    ));
                }
            }
            if let Some(value) = want.value {
                if result.iter().any(|s| s.value != value) {
                    problems.push(format!("{name}: want a count of {value}, got {result:?}"));
                }
            }
        }
    }

    // Prometheus's own evaluation agrees, and the annotations render.
    let active: Vec<&Value> = rule["alerts"].as_array().into_iter().flatten().collect();
    let active_jobs: BTreeSet<String> = active
        .iter()
        .filter_map(|a| a["labels"]["job"].as_str().map(str::to_string))
        .collect();
    if active_jobs != jobs {
        problems.push(format!(
            "{name}: Prometheus holds alerts for {active_jobs:?}, the query matches {jobs:?}"
        ));
    }
    for a in active {
        for field in ["summary", "description"] {
            let text = a["annotations"][field].as_str().unwrap_or_default();
            if text.is_empty() || text.contains("<error") || text.contains("<no value>") {
                problems.push(format!("{name}: {field} renders as {text:?}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{assert_reported, sample, topology, with_check};
    use super::super::AlertExpectation;
    use super::*;

    const RULES_YAML: &str = "groups:\n  - name: g\n    rules:\n\
        \x20     - record: job:gym_verifications:rate5m\n        expr: x\n\
        \x20     - alert: GymVerifyLow\n        expr: y\n";

    fn api(rules: Value) -> Value {
        serde_json::json!({"status": "success", "data": {"groups": [{"name": "g", "rules": rules}]}})
    }

    fn recording() -> Value {
        serde_json::json!({
            "name": "job:gym_verifications:rate5m", "query": "sum by (job) (rate(gym_v[5m]))",
            "health": "ok", "type": "recording"
        })
    }

    fn alerting(alerts: Value) -> Value {
        serde_json::json!({
            "name": "GymVerifyLow", "query": "job:gym_verifications:rate5m < 0.8",
            "health": "ok", "type": "alerting", "alerts": alerts
        })
    }

    fn firing(job: &str) -> Value {
        serde_json::json!({"labels": {"job": job},
            "annotations": {"summary": "low", "description": "rate is low"}})
    }

    /// Runs `check_rules` on `rules` with the fleet's rate answering `rate` and the alert
    /// expected on `alert_jobs`; returns problems and report.
    fn run(rules: Value, rate: Vec<Sample>, alert_jobs: &[&str]) -> (Vec<String>, Vec<String>) {
        let mut topo = topology();
        topo.alerts
            .insert("GymVerifyLow".into(), AlertExpectation::on_jobs(alert_jobs));
        let stored = vec![sample(
            &[
                ("__name__", "job:gym_verifications:rate5m"),
                ("job", "gym-fleet"),
            ],
            0.5,
        )];
        let low: Vec<Sample> = rate.iter().filter(|s| s.value < 0.8).cloned().collect();
        let answers = [
            ("sum by (job) (rate(gym_v[5m]))", rate.clone()),
            ("job:gym_verifications:rate5m{job=\"gym-fleet\"}", stored),
            ("job:gym_verifications:rate5m", rate),
            ("job:gym_verifications:rate5m < 0.8", low),
        ];
        let known = ["gym_v", "job:gym_verifications:rate5m"];
        with_check(&answers, &topo, &known, |check| {
            let (mut problems, mut report) = (Vec::new(), Vec::new());
            check_rules(check, &api(rules), RULES_YAML, &mut problems, &mut report);
            (problems, report)
        })
    }

    #[test]
    fn healthy_rules_pass_with_a_report_line_each() {
        let rate = vec![sample(&[("job", "gym-fleet")], 0.5)];
        let rules = serde_json::json!([
            recording(),
            alerting(serde_json::json!([firing("gym-fleet")]))
        ]);
        let (problems, report) = run(rules, rate, &["gym-fleet"]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(report.len(), 2, "{report:?}");
    }

    #[test]
    fn a_recording_rule_missing_its_label_is_reported() {
        // The expression lost its `by (job)`: no job label, so no series for the fleet.
        let rate = vec![sample(&[], 0.5)];
        let rules = serde_json::json!([recording()]);
        let (problems, _) = run(rules, rate, &[]);
        assert_reported(
            &problems,
            "job:gym_verifications:rate5m: no series for job gym-fleet",
        );
    }

    #[test]
    fn a_recording_rule_with_an_extra_label_is_reported() {
        let rate = vec![sample(&[("job", "gym-fleet"), ("instance", "r:1")], 0.5)];
        let (problems, _) = run(serde_json::json!([recording()]), rate, &[]);
        assert_reported(&problems, "want {\"job\"}");
    }

    #[test]
    fn rules_missing_from_prometheus_and_unhealthy_rules_are_reported() {
        let rate = vec![sample(&[("job", "gym-fleet")], 0.5)];
        let mut broken = recording();
        broken["health"] = "err".into();
        broken["lastError"] = "boom".into();
        let (problems, _) = run(serde_json::json!([broken]), rate, &[]);
        assert!(
            problems.iter().any(|p| p.starts_with("rules loaded")),
            "{problems:?}"
        );
        assert_reported(&problems, "health \"err\"");
    }

    #[test]
    fn an_alert_on_unexpected_jobs_or_without_prometheus_alerts_is_reported() {
        let rate = vec![sample(&[("job", "gym-fleet")], 0.5)];
        let rules = serde_json::json!([recording(), alerting(serde_json::json!([]))]);
        let (problems, _) = run(rules, rate, &["gym-other"]);
        assert_reported(&problems, "matches jobs {\"gym-fleet\"}");
        assert_reported(&problems, "Prometheus holds alerts for {}");
    }

    #[test]
    fn an_unrendered_annotation_and_an_unexpected_alert_are_reported() {
        let rate = vec![sample(&[("job", "gym-fleet")], 0.5)];
        let mut alert = firing("gym-fleet");
        alert["annotations"]["summary"] = "<error expanding template>".into();
        let mut rule = alerting(serde_json::json!([alert]));
        let (problems, _) = run(
            serde_json::json!([recording(), rule.clone()]),
            rate.clone(),
            &["gym-fleet"],
        );
        assert_reported(&problems, "summary renders as");
        rule["name"] = "GymSomethingNew".into();
        let (problems, _) = run(serde_json::json!([rule]), rate, &["gym-fleet"]);
        assert_reported(&problems, "GymSomethingNew: no expectation");
    }
}
