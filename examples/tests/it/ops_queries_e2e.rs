//! The operator's kit in `deploy/`, proven against real tools.
//!
//! - `promtool check rules` and `promtool test rules` pass on `deploy/prometheus/`, the unit
//!   tests name every rule, and they fail when a rule is broken.
//! - A real Prometheus scrapes a running `gym-fleet` and loads `deploy/prometheus/rules.yml`;
//!   every rule (as Prometheus loaded it, read back from `/api/v1/rules`) and every panel query
//!   of `deploy/grafana/gym-fleet.json` (read from the JSON) is executed and must return data of
//!   the expected shape. Nothing is copied from those files into this test, so they cannot drift.
//!
//! The Prometheus configuration adds two small fault jobs beside the healthy fleet, so that the
//! structural alerts are seen matching real series: `gym-headless` (one resources server
//! without its orchestrator, plus a port nobody listens on) and `gym-twice` (the orchestrator
//! scraped under two instance names: two `gym_servers_active` series in one job).
#![cfg(all(feature = "prom", not(feature = "noop")))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gym_testkit::{free_port, free_port_block, http_get, require, Prometheus, Tool};
use serde_json::Value;

// --------------------------------------------------------------------------------------------
// Files of the kit

fn deploy_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("deploy");
    dir.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn rules_file() -> PathBuf {
    deploy_dir().join("prometheus").join("rules.yml")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names after `- record:` and `- alert:` in a rules file, in file order (with
/// repeats: one record name may have several rules, one per quantile).
fn rule_names(rules_yaml: &str) -> (Vec<String>, Vec<String>) {
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

fn promtool(args: &[&str], dir: &Path) -> Option<(bool, String)> {
    let promtool = require(Tool::Promtool)?;
    let out = Command::new(&promtool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", promtool.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), text))
}

// --------------------------------------------------------------------------------------------
// promtool

#[test]
fn promtool_check_rules_finds_every_rule() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let dir = deploy_dir().join("prometheus");
    let Some((ok, out)) = promtool(&["check", "rules", "rules.yml"], &dir) else {
        return;
    };
    assert!(ok, "promtool check rules failed:\n{out}");
    let (records, alerts) = rule_names(&read(&dir.join("rules.yml")));
    let expected = format!("SUCCESS: {} rules found", records.len() + alerts.len());
    assert!(out.contains(&expected), "want {expected:?} in:\n{out}");
}

#[test]
fn promtool_unit_tests_pass_and_cover_every_rule() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let dir = deploy_dir().join("prometheus");
    let Some((ok, out)) = promtool(&["test", "rules", "rules_test.yml"], &dir) else {
        return;
    };
    assert!(ok, "promtool test rules failed:\n{out}");
    assert!(out.contains("SUCCESS"), "{out}");

    // Every record is queried and every alert is evaluated by some unit test.
    let tests = read(&dir.join("rules_test.yml"));
    let (records, alerts) = rule_names(&read(&dir.join("rules.yml")));
    for record in records {
        assert!(
            tests.contains(&format!("expr: {record}")),
            "no promql_expr_test queries {record}"
        );
    }
    for alert in alerts {
        assert!(
            tests.contains(&format!("alertname: {alert}")),
            "no alert_rule_test evaluates {alert}"
        );
    }
}

/// The unit tests can fail: with a rule broken (the success-rate threshold moved, the
/// all-fail fallback removed, the fleet size summed instead of maxed), `promtool test
/// rules` must report failures.
#[test]
fn promtool_unit_tests_catch_a_broken_rule() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let src = deploy_dir().join("prometheus");
    let rules = read(&src.join("rules.yml"));
    let tests = read(&src.join("rules_test.yml"));
    let mutations = [
        ("< 0.8", "< 0.5"),
        (
            "sum by (job) (rate(gym_verify_completed_total[5m])) * 0",
            "sum by (job) (rate(gym_verify_completed_total[5m])) * 1",
        ),
        (
            "max by (job) (gym_servers_active)",
            "sum by (job) (gym_servers_active)",
        ),
    ];
    for (from, to) in mutations {
        assert!(
            rules.contains(from),
            "rules.yml no longer contains {from:?}"
        );
        let dir = std::env::temp_dir().join(format!(
            "gym-ops-mutant-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("rules.yml"), rules.replacen(from, to, 1)).unwrap();
        std::fs::write(dir.join("rules_test.yml"), &tests).unwrap();
        let result = promtool(&["test", "rules", "rules_test.yml"], &dir);
        let _ = std::fs::remove_dir_all(&dir);
        let Some((ok, out)) = result else {
            return;
        };
        assert!(
            !ok && out.contains("FAILED"),
            "mutation {from:?} -> {to:?} went unnoticed:\n{out}"
        );
    }
}

// --------------------------------------------------------------------------------------------
// A running fleet

const SERVERS: usize = 2;
const AGENTS: usize = 2;

/// The `gym-fleet` orchestrator and its children; stopped on drop (SIGTERM, then SIGKILL;
/// the children stop when the orchestrator's pipe to them closes).
struct Fleet {
    child: Child,
    base_port: u16,
}

impl Fleet {
    fn start() -> Self {
        let base_port = free_port_block((1 + SERVERS + AGENTS) as u16);
        let child = Command::new(env!("CARGO_BIN_EXE_gym-fleet"))
            .args(["--servers", &SERVERS.to_string()])
            .args(["--agents", &AGENTS.to_string()])
            .args(["--metrics-port", &base_port.to_string()])
            // Stops by itself even if this test dies without dropping the guard.
            .args(["--duration", "180"])
            .args(["--seed", "9"])
            // Well under the 80% alert threshold, so GymFleetVerifySuccessRateLow must match.
            .args(["--pass-ratio", "0.5"])
            .args(["--generate-ms", "50..400"])
            .args(["--verify-ms", "20..300"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn gym-fleet");
        let fleet = Self { child, base_port };
        let deadline = Instant::now() + Duration::from_secs(30);
        for target in fleet.targets() {
            let url = format!("http://{target}/metrics");
            while !matches!(http_get(&url, &[]), Ok((200, _, _))) {
                assert!(Instant::now() < deadline, "{url} did not come up");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        fleet
    }

    /// The orchestrator first, then its children on the next ports (`--metrics-port`).
    fn targets(&self) -> Vec<String> {
        (0..=(SERVERS + AGENTS) as u16)
            .map(|i| format!("127.0.0.1:{}", self.base_port + i))
            .collect()
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        gym_testkit::terminate(&mut self.child, Duration::from_secs(15));
    }
}

// --------------------------------------------------------------------------------------------
// Querying Prometheus at one instant

type Labels = BTreeMap<String, String>;

#[derive(Debug, Clone)]
struct Series {
    labels: Labels,
    value: f64,
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn get_json(url: &str) -> Result<Value, String> {
    let (status, _, body) = http_get(url, &[])?;
    let text = String::from_utf8_lossy(&body);
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{url}: not JSON ({e}): {text}"))?;
    if status != 200 || json["status"] != "success" {
        return Err(format!("{url}: HTTP {status}: {text}"));
    }
    Ok(json)
}

/// An instant query at `at` (unix seconds): a vector, or an error (query errors and
/// warnings included).
fn query(base: &str, expr: &str, at: f64) -> Result<Vec<Series>, String> {
    let url = format!("{base}/api/v1/query?query={}&time={at:.3}", encode(expr));
    let json = get_json(&url).map_err(|e| format!("query `{expr}`: {e}"))?;
    if let Some(warnings) = json["warnings"].as_array().filter(|w| !w.is_empty()) {
        return Err(format!("query `{expr}`: warnings {warnings:?}"));
    }
    if json["data"]["resultType"] != "vector" {
        return Err(format!("query `{expr}`: not a vector: {json}"));
    }
    let mut out = Vec::new();
    for s in json["data"]["result"].as_array().into_iter().flatten() {
        let labels = s["metric"]
            .as_object()
            .ok_or_else(|| format!("query `{expr}`: no metric in {s}"))?
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        let value = s["value"][1]
            .as_str()
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("query `{expr}`: bad value in {s}"))?;
        out.push(Series { labels, value });
    }
    Ok(out)
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

fn label_keys(s: &Series) -> BTreeSet<String> {
    s.labels
        .keys()
        .filter(|k| k.as_str() != "__name__")
        .cloned()
        .collect()
}

fn jobs_of(result: &[Series]) -> BTreeSet<String> {
    result
        .iter()
        .filter_map(|s| s.labels.get("job").cloned())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

// --------------------------------------------------------------------------------------------
// The e2e

const FLEET_JOB: &str = "gym-fleet";
/// What the test substitutes for Grafana's `$__rate_interval`: the fleet has run for
/// 10 to 60 s when the queries run, scraped every second.
const RATE_INTERVAL: &str = "1m";

/// What the fleet looks like in Prometheus, read from `target_info`.
struct Topology {
    /// `instance`s of the resources servers (they verify).
    resources: BTreeSet<String>,
    /// `instance`s of the agents (they roll out).
    agents: BTreeSet<String>,
    /// The port nobody listens on, in job `gym-headless`.
    dead_instance: String,
}

#[test]
fn every_rule_and_panel_query_returns_data_from_a_live_fleet() {
    if gym_testkit::ran_in_child() {
        return;
    }
    if require(Tool::Prometheus).is_none() {
        return;
    }
    let fleet = Fleet::start();
    let targets = fleet.targets();
    let quoted = |ts: &[String]| {
        ts.iter()
            .map(|t| format!("'{t}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let dead_instance = format!("127.0.0.1:{}", free_port());
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
         rule_files:\n  - '{rules}'\n\
         scrape_configs:\n\
         \x20 - job_name: {FLEET_JOB}\n    static_configs:\n      - targets: [{all}]\n\
         \x20 - job_name: gym-headless\n    static_configs:\n      - targets: ['{server}', '{dead_instance}']\n\
         \x20 - job_name: gym-twice\n    static_configs:\n\
         \x20     - targets: ['{orchestrator}']\n        labels: {{instance: orchestrator-a}}\n\
         \x20     - targets: ['{orchestrator}']\n        labels: {{instance: orchestrator-b}}\n",
        rules = rules_file().display(),
        all = quoted(&targets),
        server = targets[1],
        orchestrator = targets[0],
    );
    let prometheus = Prometheus::start_with_config(&config).expect("start prometheus");
    let base = prometheus.url();
    let started = Instant::now();

    // Every fleet process up, and its role known.
    prometheus
        .wait_for(
            &format!("count(up{{job=\"{FLEET_JOB}\"}} == 1)"),
            Duration::from_secs(30),
            |s| s.first().map(|s| s.value) == Some(targets.len() as f64),
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    let of_type = |t: &str| -> BTreeSet<String> {
        prometheus
            .query(&format!(
                "target_info{{job=\"{FLEET_JOB}\", nemo_gym_server_type=\"{t}\"}}"
            ))
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|s| s.labels["instance"].clone())
            .collect()
    };
    let topology = Topology {
        resources: of_type("resources_servers"),
        agents: of_type("responses_api_agents"),
        dead_instance,
    };
    assert_eq!(
        topology.resources.len(),
        SERVERS,
        "resources servers in target_info"
    );
    assert_eq!(topology.agents.len(), AGENTS, "agents in target_info");

    // Let the fleet run ~15 s, then check everything; retry (more data, later rule
    // evaluations) until it all holds or the deadline passes.
    std::thread::sleep(Duration::from_secs(15).saturating_sub(started.elapsed()));
    let deadline = Instant::now() + Duration::from_secs(45);
    let report = loop {
        match check_everything(&base, &topology) {
            Ok(report) => break report,
            Err(problems) if Instant::now() >= deadline => panic!(
                "after {:?} of fleet, {} problem(s):\n  - {}\n\nprometheus log:\n{}",
                started.elapsed(),
                problems.len(),
                problems.join("\n  - "),
                prometheus.log_tail()
            ),
            Err(_) => std::thread::sleep(Duration::from_secs(1)),
        }
    };
    println!("{report}");
    drop(prometheus);
    drop(fleet);
}

/// Runs every check once at one instant; the report, or every problem found.
fn check_everything(base: &str, topo: &Topology) -> Result<String, Vec<String>> {
    let at = now() - 1.0;
    let mut problems = Vec::new();
    let mut report = Vec::new();
    let known = match known_names(base) {
        Ok(k) => k,
        Err(e) => return Err(vec![e]),
    };
    check_rules(base, at, topo, &known, &mut problems, &mut report);
    check_dashboard(base, at, &known, &mut problems, &mut report);
    if problems.is_empty() {
        Ok(report.join("\n"))
    } else {
        Err(problems)
    }
}

/// Every metric name and label name Prometheus holds now.
fn known_names(base: &str) -> Result<BTreeSet<String>, String> {
    let mut known = BTreeSet::new();
    for url in [
        format!("{base}/api/v1/label/__name__/values"),
        format!("{base}/api/v1/labels"),
    ] {
        let json = get_json(&url)?;
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

/// Names in `expr` that look like ours (`gym_` somewhere in them, or `target_info`) but
/// are neither a metric nor a label Prometheus holds: a typo in a branch that happens to
/// return nothing (such as the all-fail fallback `or ... * 0`) would pass unseen otherwise.
fn unknown_names(expr: &str, known: &BTreeSet<String>) -> Vec<String> {
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
        .map(str::to_string)
        .collect()
}

// --------------------------------------------------------------------------------------------
// Rules

fn check_rules(
    base: &str,
    at: f64,
    topo: &Topology,
    known: &BTreeSet<String>,
    problems: &mut Vec<String>,
    report: &mut Vec<String>,
) {
    let api = match get_json(&format!("{base}/api/v1/rules")) {
        Ok(v) => v,
        Err(e) => return problems.push(e),
    };
    let loaded: Vec<&Value> = api["data"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .collect();

    // Prometheus loaded exactly the rules of the file.
    let (records, alerts) = rule_names(&read(&rules_file()));
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
        let result = match query(base, expr, at) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        let before = problems.len();
        for unknown in unknown_names(expr, known) {
            problems.push(format!(
                "{name}: reads {unknown:?}, which Prometheus does not hold"
            ));
        }
        if rule["type"] == "recording" {
            check_recording(base, at, rule, &result, topo, problems);
        } else {
            check_alert(base, at, rule, &result, topo, problems);
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
/// the labels its level promises (`job:`, `instance:`, `job_le:`, `instance_le:`), one per
/// server of the kind that records the instrument, with sensible values; and Prometheus has
/// stored its result.
fn check_recording(
    base: &str,
    at: f64,
    rule: &Value,
    result: &[Series],
    topo: &Topology,
    problems: &mut Vec<String>,
) {
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
        other => return problems.push(format!("{name}: unknown level {other:?}")),
    };
    // The rule's own labels (quantile) are added by Prometheus when recording, not by
    // the expression.
    let fleet: Vec<&Series> = result
        .iter()
        .filter(|s| s.labels.get("job").map(String::as_str) == Some(FLEET_JOB))
        .collect();
    if fleet.is_empty() {
        return problems.push(format!(
            "{name}: no series for job {FLEET_JOB} (got {result:?})"
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
            .map(|s| s.labels["instance"].clone())
            .collect();
        if &got != kind_instances {
            problems.push(format!(
                "{name}: {}instances {got:?} in {FLEET_JOB}, want every {} {kind_instances:?}",
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
    let mut selector = format!("{name}{{job=\"{FLEET_JOB}\"");
    for (k, v) in &extra {
        selector.push_str(&format!(",{k}=\"{v}\""));
    }
    selector.push('}');
    match query(base, &selector, at) {
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

/// Splits `LHS OP NUMBER` (the form of a threshold alert) into its parts.
fn split_threshold(expr: &str) -> Option<(&str, &str, f64)> {
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

fn compare(v: f64, op: &str, threshold: f64) -> bool {
    match op {
        "<" => v < threshold,
        ">" => v > threshold,
        "<=" => v <= threshold,
        ">=" => v >= threshold,
        "==" => v == threshold,
        _ => v != threshold,
    }
}

/// An alerting rule: its expression runs; a threshold alert matches exactly the series of
/// its left-hand side that cross the threshold (and that side has data for the fleet); the
/// structural alerts match exactly the fault jobs of this test's configuration; Prometheus
/// itself holds the same alerts (pending: every alert has a `for`) with rendered annotations.
fn check_alert(
    base: &str,
    at: f64,
    rule: &Value,
    result: &[Series],
    topo: &Topology,
    problems: &mut Vec<String>,
) {
    let name = rule["name"].as_str().unwrap_or_default();
    let expr = rule["query"].as_str().unwrap_or_default();
    let key = |s: &Series| {
        let mut l = s.labels.clone();
        l.remove("__name__");
        l
    };
    let got: BTreeSet<Labels> = result.iter().map(key).collect();

    if let Some((lhs, op, threshold)) = split_threshold(expr) {
        match query(base, lhs, at) {
            Err(e) => problems.push(format!("{name}: left-hand side: {e}")),
            Ok(l) if !jobs_of(&l).contains(FLEET_JOB) => problems.push(format!(
                "{name}: left-hand side `{lhs}` has no data for {FLEET_JOB}: {l:?}"
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

    // What this test's fleet and fault jobs must trigger.
    let jobs = jobs_of(result);
    let expected_jobs = match name {
        // --pass-ratio 0.5: the fleet (and its server scraped alone) are below 80%.
        "GymFleetVerifySuccessRateLow" => Some(set(&[FLEET_JOB, "gym-headless"])),
        "GymServersActiveMissing" => Some(set(&["gym-headless"])),
        "GymServersActiveDuplicated" => Some(set(&["gym-twice"])),
        "GymScrapeTargetDown" => Some(set(&["gym-headless"])),
        // Rollouts take well under a second.
        "GymRolloutLatencyHigh" => Some(BTreeSet::new()),
        _ => None,
    };
    match expected_jobs {
        None => problems.push(format!(
            "{name}: no expectation in this test for this alert"
        )),
        Some(want) if want != jobs => {
            problems.push(format!("{name}: matches jobs {jobs:?}, want {want:?}"))
        }
        Some(_) => {}
    }
    if name == "GymScrapeTargetDown" {
        let instances: BTreeSet<String> = result
            .iter()
            .filter_map(|s| s.labels.get("instance").cloned())
            .collect();
        if instances != set(&[&topo.dead_instance]) {
            problems.push(format!(
                "{name}: instances {instances:?}, want only {}",
                topo.dead_instance
            ));
        }
    }
    if name == "GymServersActiveDuplicated" && result.iter().any(|s| s.value != 2.0) {
        problems.push(format!("{name}: want a count of 2, got {result:?}"));
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

// --------------------------------------------------------------------------------------------
// Dashboard

/// Grafana's variables, as the test sets them: the fleet's job, a concrete window.
fn substitute(expr: &str) -> String {
    expr.replace("$__rate_interval", RATE_INTERVAL)
        .replace("${job}", FLEET_JOB)
        .replace("$job", FLEET_JOB)
}

/// `{{label}}` placeholders of a legend format.
fn legend_labels(format: &str) -> Vec<String> {
    format
        .split("{{")
        .skip(1)
        .filter_map(|part| part.split_once("}}").map(|(l, _)| l.trim().to_string()))
        .collect()
}

fn check_dashboard(
    base: &str,
    at: f64,
    known: &BTreeSet<String>,
    problems: &mut Vec<String>,
    report: &mut Vec<String>,
) {
    let path = deploy_dir().join("grafana").join("gym-fleet.json");
    let dash: Value = match serde_json::from_str(&read(&path)) {
        Ok(v) => v,
        Err(e) => return problems.push(format!("{}: {e}", path.display())),
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
        let Some(inner) = def
            .strip_prefix("label_values(")
            .and_then(|d| d.strip_suffix(')'))
        else {
            problems.push(format!(
                "variable {}: unsupported definition {def:?}",
                v["name"]
            ));
            continue;
        };
        let Some((selector, label)) = inner.rsplit_once(',') else {
            problems.push(format!(
                "variable {}: unsupported definition {def:?}",
                v["name"]
            ));
            continue;
        };
        let label = label.trim();
        let q = format!("group by ({label}) ({})", substitute(selector));
        match query(base, &q, at) {
            Ok(r) => {
                let values: BTreeSet<String> = r
                    .iter()
                    .filter_map(|s| s.labels.get(label).cloned())
                    .collect();
                if !values.contains(FLEET_JOB) {
                    problems.push(format!(
                        "variable {}: {q} offers {values:?}, not {FLEET_JOB}",
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
    let http_exported = query(
        base,
        &format!("http_server_request_duration_seconds_count{{job=\"{FLEET_JOB}\"}}"),
        at,
    )
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
            let expr = substitute(raw);
            let what = format!("panel {title:?} {}", t["refId"]);
            if t["datasource"]["uid"] != ds_uid.as_str() {
                problems.push(format!("{what}: datasource is not {ds_uid}"));
            }
            if expr.contains('$') {
                problems.push(format!("{what}: unknown variable left in `{expr}`"));
                continue;
            }
            let result = match query(base, &expr, at) {
                Ok(r) => r,
                Err(e) => {
                    problems.push(format!("{what}: {e}"));
                    continue;
                }
            };
            for unknown in unknown_names(&expr, known) {
                problems.push(format!(
                    "{what}: reads {unknown:?}, which Prometheus does not hold"
                ));
            }
            let is_http = raw.contains("http_server_request_duration");
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
                if s.labels.get("job").map(String::as_str) != Some(FLEET_JOB) {
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

#[test]
fn threshold_expressions_split() {
    if gym_testkit::ran_in_child() {
        return;
    }
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
    assert_eq!(
        split_threshold("(up and on (job) y) == 0").map(|t| t.1),
        Some("==")
    );
    assert_eq!(split_threshold("a or absent(b)"), None);
    let known = set(&[
        "gym_verify_completed_total",
        "nemo_gym_server_name",
        "target_info",
    ]);
    assert_eq!(
        unknown_names(
            "sum(gym_verify_completed_totl{a=\"gym_x\"}) * on (job) group_left (nemo_gym_server_name) target_info",
            &known
        ),
        ["gym_verify_completed_totl"]
    );
    assert_eq!(
        legend_labels("{{nemo_gym_server_name}} {{ instance }} p95"),
        ["nemo_gym_server_name", "instance"]
    );
}
