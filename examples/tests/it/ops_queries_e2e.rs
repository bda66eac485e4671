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

use gym_testkit::{
    check_everything, free_port, free_port_block, http_get, require, rule_names, AlertExpectation,
    DeployKit, Prometheus, Tool, Topology,
};

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

fn promtool(args: &[&str], dir: &Path) -> (bool, String) {
    let promtool = require(Tool::Promtool);
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
    (out.status.success(), text)
}

// --------------------------------------------------------------------------------------------
// promtool

#[test]
fn promtool_check_rules_finds_every_rule() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let dir = deploy_dir().join("prometheus");
    let (ok, out) = promtool(&["check", "rules", "rules.yml"], &dir);
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
    let (ok, out) = promtool(&["test", "rules", "rules_test.yml"], &dir);
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
/// all-fail fallback removed, the fleet size summed instead of maxed, an HTTP process
/// counted under both conventions, an old bound left in ms), `promtool test rules` must
/// report failures.
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
        // A process with both HTTP conventions counted twice.
        (
            "unless on (job, instance) http_server_request_duration_seconds_count",
            "or on (job, instance) http_server_request_duration_seconds_count",
        ),
        // An old bound of three digits left in milliseconds.
        (r#""le", "0.$1", "le""#, r#""le", "$1", "le""#),
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
        let (ok, out) = result;
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
// The e2e

const FLEET_JOB: &str = "gym-fleet";
/// What the test substitutes for Grafana's `$__rate_interval`: the fleet has run for
/// 10 to 60 s when the queries run, scraped every second.
const RATE_INTERVAL: &str = "1m";

#[test]
fn every_rule_and_panel_query_returns_data_from_a_live_fleet() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
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
    // What this test's fleet and fault jobs must trigger.
    let alerts = BTreeMap::from([
        // --pass-ratio 0.5: the fleet (and its server scraped alone) are below 80%.
        (
            "GymFleetVerifySuccessRateLow",
            AlertExpectation::on_jobs(&[FLEET_JOB, "gym-headless"]),
        ),
        (
            "GymServersActiveMissing",
            AlertExpectation::on_jobs(&["gym-headless"]),
        ),
        (
            "GymServersActiveDuplicated",
            AlertExpectation::on_jobs(&["gym-twice"]).with_value(2.0),
        ),
        (
            "GymScrapeTargetDown",
            AlertExpectation::on_jobs(&["gym-headless"]).with_instances(&[&dead_instance]),
        ),
        // Rollouts take well under a second.
        ("GymRolloutLatencyHigh", AlertExpectation::on_jobs(&[])),
    ]);
    let topology = Topology {
        fleet_job: FLEET_JOB.to_string(),
        resources: of_type("resources_servers"),
        agents: of_type("responses_api_agents"),
        alerts: alerts
            .into_iter()
            .map(|(name, want)| (name.to_string(), want))
            .collect(),
    };
    assert_eq!(
        topology.resources.len(),
        SERVERS,
        "resources servers in target_info"
    );
    assert_eq!(topology.agents.len(), AGENTS, "agents in target_info");

    let kit = DeployKit {
        rules_yaml: read(&rules_file()),
        dashboard_json: read(&deploy_dir().join("grafana").join("gym-fleet.json")),
        rate_interval: RATE_INTERVAL.to_string(),
    };

    // Let the fleet run ~15 s, then check everything; retry (more data, later rule
    // evaluations) until it all holds or the deadline passes.
    std::thread::sleep(Duration::from_secs(15).saturating_sub(started.elapsed()));
    let deadline = Instant::now() + Duration::from_secs(45);
    let report = loop {
        match check_everything(&base, &kit, &topology) {
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
