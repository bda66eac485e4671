//! Checks of the operator's kit in `deploy/` against a live Prometheus: every rule of the
//! rules file (as Prometheus loaded it) and every panel query of the Grafana dashboard runs
//! and returns data of the expected shape.

mod dashboard;
mod expr;
mod rules;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::sample::{api_json, instant_query_at, Sample};

pub use expr::rule_names;

/// The kit under test, as written: the rules file, the dashboard, and Grafana's rate window.
#[derive(Debug, Clone)]
pub struct DeployKit {
    /// The text of the Prometheus rules file (`rules.yml`).
    pub rules_yaml: String,
    /// The text of the Grafana dashboard JSON.
    pub dashboard_json: String,
    /// What `$__rate_interval` becomes in panel queries (such as `1m`).
    pub rate_interval: String,
}

/// What the fleet looks like in Prometheus, and what each alert must match.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    /// The healthy fleet's job: recording rules and panels must have data for it.
    pub fleet_job: String,
    /// `instance`s of the resources servers (they verify).
    pub resources: BTreeSet<String>,
    /// `instance`s of the agents (they roll out).
    pub agents: BTreeSet<String>,
    /// Per alert name, what it must match; an alert without an entry is a problem.
    pub alerts: BTreeMap<String, AlertExpectation>,
}

/// What one alerting rule's expression must match at the instant of the check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertExpectation {
    /// Exactly the `job`s of the matched series (empty: the alert must not match).
    pub jobs: BTreeSet<String>,
    /// If set, exactly the `instance`s of the matched series.
    pub instances: Option<BTreeSet<String>>,
    /// If set, the value of every matched series.
    pub value: Option<f64>,
}

impl AlertExpectation {
    /// Matches series of exactly these jobs.
    pub fn on_jobs(jobs: &[&str]) -> Self {
        Self {
            jobs: expr::set(jobs),
            ..Self::default()
        }
    }

    /// Also matches series of exactly these instances.
    pub fn with_instances(self, instances: &[&str]) -> Self {
        Self {
            instances: Some(expr::set(instances)),
            ..self
        }
    }

    /// Also every matched series has this value.
    pub fn with_value(self, value: f64) -> Self {
        Self {
            value: Some(value),
            ..self
        }
    }
}

/// An instant query at the instant of the check.
type Query<'a> = dyn Fn(&str) -> Result<Vec<Sample>, String> + 'a;

/// What every check reads: how to query, the fleet, and the names Prometheus holds.
struct Check<'a> {
    query: &'a Query<'a>,
    topo: &'a Topology,
    known: &'a BTreeSet<String>,
}

/// Runs every check once against the Prometheus at `base_url`, one second before now.
/// Returns the report, or every problem found.
pub fn check_everything(
    base_url: &str,
    kit: &DeployKit,
    topo: &Topology,
) -> Result<String, Vec<String>> {
    let at = now() - 1.0;
    let known = known_names(base_url).map_err(|e| vec![e])?;
    let query = |expr: &str| instant_query_at(base_url, expr, at);
    let check = Check {
        query: &query,
        topo,
        known: &known,
    };
    let mut problems = Vec::new();
    let mut report = Vec::new();
    match api_json(&format!("{base_url}/api/v1/rules")) {
        Ok(api) => rules::check_rules(&check, &api, &kit.rules_yaml, &mut problems, &mut report),
        Err(e) => problems.push(e),
    }
    dashboard::check_dashboard(
        &check,
        &kit.dashboard_json,
        &kit.rate_interval,
        &mut problems,
        &mut report,
    );
    if problems.is_empty() {
        Ok(report.join("\n"))
    } else {
        Err(problems)
    }
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// Every metric name and label name Prometheus holds now.
fn known_names(base_url: &str) -> Result<BTreeSet<String>, String> {
    let mut known = BTreeSet::new();
    for url in [
        format!("{base_url}/api/v1/label/__name__/values"),
        format!("{base_url}/api/v1/labels"),
    ] {
        let json = api_json(&url)?;
        known.extend(
            json["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string)),
        );
    }
    Ok(known)
}

/// Fakes for the checks' unit tests: canned query answers, a small fleet.
#[cfg(test)]
mod fake {
    use super::*;

    /// A series with these labels and value.
    pub fn sample(labels: &[(&str, &str)], value: f64) -> Sample {
        Sample {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            value,
        }
    }

    /// Fails unless one of `problems` says `what`.
    pub fn assert_reported(problems: &[String], what: &str) {
        assert!(
            problems.iter().any(|p| p.contains(what)),
            "no problem says {what:?}: {problems:?}"
        );
    }

    /// A fleet `gym-fleet` of resources server `r:1` and agent `a:1`.
    pub fn topology() -> Topology {
        Topology {
            fleet_job: "gym-fleet".into(),
            resources: expr::set(&["r:1"]),
            agents: expr::set(&["a:1"]),
            alerts: BTreeMap::new(),
        }
    }

    /// Runs `f` with a [`Check`] whose queries answer from `answers` (empty otherwise).
    pub fn with_check<R>(
        answers: &[(&str, Vec<Sample>)],
        topo: &Topology,
        known: &[&str],
        f: impl FnOnce(&Check) -> R,
    ) -> R {
        let answers: BTreeMap<String, Vec<Sample>> = answers
            .iter()
            .map(|(q, r)| (q.to_string(), r.clone()))
            .collect();
        let query = |q: &str| Ok(answers.get(q).cloned().unwrap_or_default());
        let known = expr::set(known);
        f(&Check {
            query: &query,
            topo,
            known: &known,
        })
    }
}
