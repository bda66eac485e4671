//! The dashboard checks: importable with a Prometheus datasource variable, its query
//! variables offer the fleet's job, and every panel query returns plausible fleet data.

use std::collections::BTreeSet;

use serde_json::Value;

use super::expr::{legend_labels, substitute, unknown_names};
use super::Check;

/// Checks the Grafana dashboard `dashboard_json`, with `$__rate_interval` set to `rate_interval`.
pub(super) fn check_dashboard(
    check: &Check,
    dashboard_json: &str,
    rate_interval: &str,
    problems: &mut Vec<String>,
    report: &mut Vec<String>,
) {
    let fleet_job = check.topo.fleet_job.as_str();
    let set_vars = |expr: &str| substitute(expr, fleet_job, rate_interval);
    let dash: Value = match serde_json::from_str(dashboard_json) {
        Ok(v) => v,
        Err(e) => return problems.push(format!("dashboard: not JSON: {e}")),
    };

    // Importable with a Prometheus datasource variable, used by every panel and target.
    let vars: Vec<&Value> = dash["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let ds_var = vars
        .iter()
        .find(|v| v["type"] == "datasource" && v["query"] == "prometheus");
    let Some(ds_var) = ds_var else {
        return problems.push("dashboard: no Prometheus datasource variable".into());
    };
    let ds_uid = format!("${{{}}}", ds_var["name"].as_str().unwrap_or_default());

    // Query variables: label_values(SELECTOR, LABEL) runs as `group by (LABEL) (SELECTOR)`.
    for v in vars.iter().filter(|v| v["type"] == "query") {
        let def = v["definition"].as_str().unwrap_or_default();
        let parsed = def
            .strip_prefix("label_values(")
            .and_then(|d| d.strip_suffix(')'))
            .and_then(|inner| inner.rsplit_once(','));
        let Some((selector, label)) = parsed else {
            problems.push(format!(
                "variable {}: unsupported definition {def:?}",
                v["name"]
            ));
            continue;
        };
        let label = label.trim();
        let q = format!("group by ({label}) ({})", set_vars(selector));
        match (check.query)(&q) {
            Ok(r) => {
                let values: BTreeSet<String> = r
                    .iter()
                    .filter_map(|s| s.labels.get(label).cloned())
                    .collect();
                if !values.contains(fleet_job) {
                    problems.push(format!(
                        "variable {}: {q} offers {values:?}, not {fleet_job}",
                        v["name"]
                    ));
                } else {
                    report.push(format!("ok  variable  {}: {values:?}", v["name"]));
                }
            }
            Err(e) => problems.push(format!("variable {}: {e}", v["name"])),
        }
    }

    // Is the HTTP instrumentation exported yet? Its panels must have data once it is.
    let http_exported = (check.query)(&format!(
        "http_server_request_duration_seconds_count{{job=\"{fleet_job}\"}}"
    ))
    .map(|r| !r.is_empty())
    .unwrap_or(false);

    let panels: Vec<&Value> = dash["panels"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| {
            // Collapsed rows hold their panels inside.
            std::iter::once(p).chain(p["panels"].as_array().into_iter().flatten())
        })
        .filter(|p| p["type"] != "row")
        .collect();
    if panels.is_empty() {
        problems.push("dashboard: no panels".into());
    }
    for panel in panels {
        let title = panel["title"].as_str().unwrap_or_default();
        if panel["datasource"]["uid"] != ds_uid.as_str() {
            problems.push(format!("panel {title:?}: datasource is not {ds_uid}"));
        }
        let unit = panel["fieldConfig"]["defaults"]["unit"]
            .as_str()
            .unwrap_or_default();
        let targets: Vec<&Value> = panel["targets"].as_array().into_iter().flatten().collect();
        if targets.is_empty() {
            problems.push(format!("panel {title:?}: no query"));
        }
        for t in targets {
            let raw = t["expr"].as_str().unwrap_or_default();
            let expr = set_vars(raw);
            let what = format!("panel {title:?} {}", t["refId"]);
            if t["datasource"]["uid"] != ds_uid.as_str() {
                problems.push(format!("{what}: datasource is not {ds_uid}"));
            }
            if expr.contains('$') {
                problems.push(format!("{what}: unknown variable left in `{expr}`"));
                continue;
            }
            let result = match (check.query)(&expr) {
                Ok(r) => r,
                Err(e) => {
                    problems.push(format!("{what}: {e}"));
                    continue;
                }
            };
            for unknown in unknown_names(&expr, check.known) {
                problems.push(format!(
                    "{what}: reads {unknown:?}, which Prometheus does not hold"
                ));
            }
            // The HTTP panels read the raw series or the HTTP rules over them.
            let is_http = raw.contains("http_server_request");
            if is_http && !http_exported {
                if !result.is_empty() {
                    problems.push(format!("{what}: data without the HTTP series? {result:?}"));
                }
                report.push(format!(
                    "ok  panel     {title:?} {}: runs; empty until http_server_request_duration_seconds is exported",
                    t["refId"]
                ));
                continue;
            }
            if result.is_empty() {
                problems.push(format!("{what}: empty panel: `{expr}`"));
                continue;
            }
            let before = problems.len();
            let legend = t["legendFormat"].as_str().unwrap_or_default();
            for s in &result {
                if s.labels.get("job").map(String::as_str) != Some(fleet_job) {
                    problems.push(format!("{what}: series outside the fleet {:?}", s.labels));
                }
                for l in legend_labels(legend) {
                    if s.labels.get(&l).is_none_or(|v| v.is_empty()) {
                        problems.push(format!(
                            "{what}: legend {legend:?} needs label {l:?}, missing in {:?}",
                            s.labels
                        ));
                    }
                }
                let v = s.value;
                let bad = match unit {
                    "percentunit" => !(0.0..=1.0).contains(&v),
                    "ms" | "s" => !(v.is_finite() && v > 0.0),
                    // A stalled server shows 0; the fleet as a whole must be busy (below).
                    "ops" | "reqps" => !(v.is_finite() && v >= 0.0),
                    _ => !v.is_finite(),
                };
                if bad {
                    problems.push(format!(
                        "{what}: value {v} implausible for unit {unit:?}: {:?}",
                        s.labels
                    ));
                }
            }
            if matches!(unit, "ops" | "reqps") && !result.iter().any(|s| s.value > 0.0) {
                problems.push(format!("{what}: all zero: `{expr}`"));
            }
            if problems.len() == before {
                report.push(format!(
                    "ok  panel     {title:?} {}: {} series",
                    t["refId"],
                    result.len()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{assert_reported, sample, topology, with_check};
    use super::*;
    use crate::sample::Sample;

    const VARIABLE_QUERY: &str = "group by (job) (target_info)";
    const PANEL_QUERY: &str = "sum by (job, instance) (rate(gym_v{job=\"gym-fleet\"}[1m]))";

    /// A dashboard with a datasource variable, a job variable, and one `ops` panel in a row.
    fn dashboard() -> Value {
        serde_json::json!({
            "templating": {"list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus"},
                {"name": "job", "type": "query", "definition": "label_values(target_info, job)"}
            ]},
            "panels": [{"type": "row", "panels": [{
                "type": "timeseries", "title": "Verify rate",
                "datasource": {"uid": "${datasource}"},
                "fieldConfig": {"defaults": {"unit": "ops"}},
                "targets": [{
                    "refId": "A", "datasource": {"uid": "${datasource}"},
                    "expr": "sum by (job, instance) (rate(gym_v{job=\"$job\"}[$__rate_interval]))",
                    "legendFormat": "{{instance}}"
                }]
            }]}]
        })
    }

    fn run(dash: &str, panel_answer: Vec<Sample>) -> (Vec<String>, Vec<String>) {
        let answers = [
            (VARIABLE_QUERY, vec![sample(&[("job", "gym-fleet")], 1.0)]),
            (PANEL_QUERY, panel_answer),
        ];
        with_check(&answers, &topology(), &["gym_v", "target_info"], |check| {
            let (mut problems, mut report) = (Vec::new(), Vec::new());
            check_dashboard(check, dash, "1m", &mut problems, &mut report);
            (problems, report)
        })
    }

    fn busy() -> Vec<Sample> {
        vec![sample(&[("job", "gym-fleet"), ("instance", "r:1")], 2.0)]
    }

    #[test]
    fn a_good_dashboard_passes() {
        let (problems, report) = run(&dashboard().to_string(), busy());
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(report.len(), 2, "{report:?}");
    }

    #[test]
    fn a_missing_legend_label_and_an_idle_fleet_are_reported() {
        let idle = vec![sample(&[("job", "gym-fleet")], 0.0)];
        let (problems, _) = run(&dashboard().to_string(), idle);
        assert_reported(&problems, "needs label \"instance\"");
        assert_reported(&problems, "all zero");
    }

    #[test]
    fn an_empty_panel_and_series_outside_the_fleet_are_reported() {
        let (problems, _) = run(&dashboard().to_string(), Vec::new());
        assert_reported(&problems, "empty panel");
        let other = vec![sample(&[("job", "other"), ("instance", "r:1")], 2.0)];
        let (problems, _) = run(&dashboard().to_string(), other);
        assert_reported(&problems, "series outside the fleet");
    }

    #[test]
    fn a_wrong_datasource_and_a_stray_variable_are_reported() {
        let mut dash = dashboard();
        let panel = &mut dash["panels"][0]["panels"][0];
        panel["datasource"]["uid"] = "prometheus".into();
        panel["targets"][0]["expr"] = "rate(gym_v{instance=\"$instance\"}[5m])".into();
        let (problems, _) = run(&dash.to_string(), busy());
        assert_reported(&problems, "datasource is not ${datasource}");
        assert_reported(&problems, "unknown variable left");
    }

    #[test]
    fn a_dashboard_without_a_datasource_variable_is_reported() {
        let mut dash = dashboard();
        dash["templating"]["list"][0]["type"] = "custom".into();
        let (problems, _) = run(&dash.to_string(), busy());
        assert_eq!(problems, ["dashboard: no Prometheus datasource variable"]);
        let (problems, _) = run("{", busy());
        assert!(
            problems[0].starts_with("dashboard: not JSON"),
            "{problems:?}"
        );
    }
}
