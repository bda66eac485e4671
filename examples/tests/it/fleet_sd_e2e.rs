//! End to end, issue 18 §1: the real `gym-fleet` publishes its live processes
//! at the orchestrator's `GET /sd` (and in a `--file-sd` file); a real
//! Prometheus, configured only by the file `--prometheus-config` writes, and
//! a real vmagent remote-writing into a real VictoriaMetrics find every
//! process through it, exactly once, and lose a SIGKILLed server's target.
#![cfg(all(feature = "prom", not(feature = "noop")))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::support::{send_signal, Fleet};
use gym_testkit::{
    free_port_block, http_get, require, Prometheus, Sample, Tool, VictoriaMetrics, Vmagent,
};

const SERVERS: usize = 3;
const AGENTS: usize = 2;
const RUN_ID: &str = "e2e-run-\"sd\"";
/// Bound on every wait below: discovery, a scrape, the remote write.
const WAIT: Duration = Duration::from_secs(30);

/// One fleet at a time: the machine has two cores.
static ONE_FLEET: Mutex<()> = Mutex::new(());

/// What one discovered process looks like to a scraper.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    name: String,
    server_type: String,
    role: String,
    instance: String,
    up: bool,
}

/// A temp directory for the fleet's written files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("gym-sd-e2e-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fleet of `servers` + `agents` at a low request rate, its `/metrics`
/// ports from `base`, running at most `secs`.
fn start_fleet(servers: usize, agents: usize, base: u16, secs: u64, extra: &[String]) -> Fleet {
    start_fleet_with(servers, agents, base, secs, extra, &[])
}

/// [`start_fleet`] in the environment `env`.
fn start_fleet_with(
    servers: usize,
    agents: usize,
    base: u16,
    secs: u64,
    extra: &[String],
    env: &[(&str, String)],
) -> Fleet {
    let mut args: Vec<String> = [
        "--servers",
        &servers.to_string(),
        "--agents",
        &agents.to_string(),
        "--seed",
        "18",
        "--generate-ms",
        "200..600",
        "--verify-ms",
        "20..80",
        "--concurrency",
        "2",
        "--drain",
        "2",
        "--duration",
        &secs.to_string(),
        "--metrics-port",
        &base.to_string(),
        "--run-id",
        RUN_ID,
    ]
    .map(String::from)
    .to_vec();
    args.extend_from_slice(extra);
    let fleet = Fleet::start(&args, env);
    fleet
        .wait_line(WAIT, |l| l.starts_with("processes:"))
        .unwrap_or_else(|| panic!("the fleet did not start:\n{}", fleet.output()));
    fleet
}

/// Every process the fleet should list: name, type, role.
fn expected(servers: usize, agents: usize) -> BTreeSet<(String, String, String)> {
    let mut all = BTreeSet::from([(
        "orchestrator".to_string(),
        "orchestrator".to_string(),
        "orchestrator".to_string(),
    )]);
    all.extend((0..servers).map(|i| {
        (
            format!("resources-{i}"),
            "resources_servers".into(),
            "server".into(),
        )
    }));
    all.extend((0..agents).map(|i| {
        (
            format!("agent-{i}"),
            "responses_api_agents".into(),
            "server".into(),
        )
    }));
    all
}

/// The processes of `seen` whose target is up.
fn names(seen: &[Seen]) -> BTreeSet<(String, String, String)> {
    seen.iter()
        .filter(|s| s.up)
        .map(|s| (s.name.clone(), s.server_type.clone(), s.role.clone()))
        .collect()
}

/// The active targets of a Prometheus-compatible `/api/v1/targets` body,
/// up or not, with their discovered labels checked for the run id.
fn active_targets(body: &str) -> Vec<Seen> {
    let doc: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let label = |t: &serde_json::Value, k: &str| t["labels"][k].as_str().unwrap_or("").to_string();
    doc["data"]["activeTargets"]
        .as_array()
        .unwrap_or_else(|| panic!("no activeTargets in {body}"))
        .iter()
        .map(|t| {
            assert_eq!(label(t, "nemo_run_id"), RUN_ID, "{t}");
            Seen {
                name: label(t, "nemo_gym_server_name"),
                server_type: label(t, "nemo_gym_server_type"),
                role: label(t, "gym_role"),
                instance: label(t, "instance"),
                up: t["health"] == "up",
            }
        })
        .collect()
}

/// Polls `read` until `done` holds; the last value, or a panic showing it.
fn wait_until<T: std::fmt::Debug>(
    what: &str,
    mut read: impl FnMut() -> Result<T, String>,
    done: impl Fn(&T) -> bool,
    context: impl Fn() -> String,
) -> T {
    let start = Instant::now();
    loop {
        let last = read();
        if let Ok(v) = &last {
            if done(v) {
                return last.unwrap();
            }
        }
        if start.elapsed() > WAIT {
            panic!("{what}: not within {WAIT:?}; last: {last:?}\n{}", context());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn sd_document(url: &str) -> serde_json::Value {
    let (status, headers, body) = http_get(url, &[]).unwrap();
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "application/json"),
        "{headers:?}"
    );
    serde_json::from_slice(&body).unwrap()
}

fn listed_names(doc: &serde_json::Value) -> BTreeSet<String> {
    doc.as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["labels"]["nemo_gym_server_name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn file_sd_names(path: &Path) -> BTreeSet<String> {
    listed_names(&serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
}

#[test]
fn prometheus_discovers_every_process_from_the_orchestrator_and_drops_a_killed_one() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let _one = ONE_FLEET.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = Scratch::new("prometheus");
    let config = scratch.path("prometheus.yml");
    let file_sd = scratch.path("fleet.json");
    let base = free_port_block((1 + SERVERS + AGENTS) as u16);
    // NeMo Gym's memory profiling on: the orchestrator's memory gauges name
    // each launched server.
    let fleet = start_fleet_with(
        SERVERS,
        AGENTS,
        base,
        90,
        &[
            "--prometheus-config".into(),
            config.display().to_string(),
            "--file-sd".into(),
            file_sd.display().to_string(),
        ],
        &[("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "1".into())],
    );
    // Prometheus runs the configuration exactly as gym-fleet wrote it.
    let yaml = std::fs::read_to_string(&config).unwrap();
    assert!(
        yaml.contains("http_sd_configs") && !yaml.contains("static_configs"),
        "{yaml}"
    );
    let prometheus = Prometheus::start_with_config(&yaml).expect("prometheus starts");
    let targets = || {
        http_get(
            &format!("{}/api/v1/targets?state=active", prometheus.url()),
            &[],
        )
        .map(|(_, _, body)| active_targets(&String::from_utf8_lossy(&body)))
    };
    let context = || {
        format!(
            "{}\n--- prometheus:\n{}",
            fleet.output(),
            prometheus.log_tail()
        )
    };

    let want = expected(SERVERS, AGENTS);
    let seen = wait_until(
        "every process discovered and up",
        targets,
        |s| names(s) == want && s.len() == want.len(),
        context,
    );
    let instances: BTreeSet<&str> = seen.iter().map(|s| s.instance.as_str()).collect();
    assert_eq!(
        instances.len(),
        want.len(),
        "one target per process: {seen:?}"
    );
    assert!(seen
        .iter()
        .any(|s| s.name == "orchestrator" && s.instance == format!("127.0.0.1:{base}")));
    // Every process's series carry the discovered labels.
    let per_name = prometheus
        .wait_for("count by (nemo_gym_server_name) (target_info)", WAIT, |s| {
            s.len() == want.len() && s.iter().all(|x| x.value == 1.0)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
    assert_eq!(per_name.len(), want.len());
    let sd_url = format!("http://127.0.0.1:{base}/sd");
    let all_names: BTreeSet<String> = want.iter().map(|w| w.0.clone()).collect();
    assert_eq!(listed_names(&sd_document(&sd_url)), all_names);
    assert_eq!(file_sd_names(&file_sd), all_names);
    // Gym's memory gauges, one per launched process under its own name (the
    // written relabelling puts it back over the orchestrator's discovered
    // one), all from the orchestrator's target.
    let launched: BTreeSet<String> = all_names
        .iter()
        .filter(|n| *n != "orchestrator")
        .cloned()
        .collect();
    // `gone`: the one process whose memory reads zero (it exited).
    let memory = |gone: Option<&'static str>| {
        let want = launched.clone();
        prometheus
            .wait_for(
                "gym_server_memory_usage_bytes{memory_type=\"rss\"}",
                WAIT,
                move |s| {
                    let name = |x: &Sample| x.labels.get("nemo_gym_server_name").cloned();
                    let named: BTreeSet<String> = s.iter().filter_map(name).collect();
                    let zero_when_gone =
                        |x: &Sample| (name(x).as_deref() == gone) == (x.value == 0.0);
                    named == want && s.len() == want.len() && s.iter().all(zero_when_gone)
                },
            )
            .unwrap_or_else(|e| panic!("{e}\n{}", context()))
    };
    for sample in memory(None) {
        let labels = &sample.labels;
        assert_eq!(
            labels["instance"],
            format!("127.0.0.1:{base}"),
            "{labels:?}"
        );
        assert!(
            labels.keys().all(|k| !k.starts_with("exported_nemo_gym")),
            "{labels:?}"
        );
        assert!(["resources_servers", "responses_api_agents"]
            .contains(&labels["nemo_gym_server_type"].as_str()));
        assert!(sample.value > 1e6, "{sample:?}");
    }

    // SIGKILL one server: its target leaves /sd, the file, and Prometheus.
    let victim = "resources-1";
    send_signal(fleet.pid_of(victim), "KILL");
    let seen = wait_until(
        "the killed server's target gone",
        targets,
        |s| !s.iter().any(|x| x.name == victim) && s.len() == want.len() - 1,
        context,
    );
    assert!(seen.iter().all(|s| s.name != victim));
    let mut rest = all_names.clone();
    rest.remove(victim);
    assert_eq!(listed_names(&sd_document(&sd_url)), rest);
    assert_eq!(file_sd_names(&file_sd), rest);
    // Its memory reads zero, as Gym reports a server that is gone.
    memory(Some(victim));
    prometheus
        .wait_for("gym_servers_active", WAIT, |s| {
            s.len() == 1 && s[0].value == (SERVERS - 1) as f64
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
}

/// `count by (instance) (up)` as instance → count.
fn count_by_instance(samples: &[Sample]) -> BTreeMap<String, f64> {
    samples
        .iter()
        .map(|s| {
            (
                s.labels.get("instance").cloned().unwrap_or_default(),
                s.value,
            )
        })
        .collect()
}

#[test]
fn vmagent_discovers_every_process_and_victoria_metrics_holds_each_once() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Vmagent);
    require(Tool::VictoriaMetrics);
    let _one = ONE_FLEET.lock().unwrap_or_else(|e| e.into_inner());
    let base = free_port_block((1 + SERVERS + AGENTS) as u16);
    let fleet = start_fleet(SERVERS, AGENTS, base, 90, &[]);
    let vm = VictoriaMetrics::start().expect("victoria-metrics starts");
    let sd_url = format!("http://127.0.0.1:{base}/sd");
    let vmagent = Vmagent::start(
        &sd_url,
        &format!("{}/api/v1/write", vm.url()),
        Duration::from_secs(1),
    )
    .expect("vmagent starts");
    let context = || {
        format!(
            "{}\n--- vmagent:\n{}\n--- victoria-metrics:\n{}",
            fleet.output(),
            vmagent.log_tail(),
            vm.log_tail()
        )
    };
    let want = expected(SERVERS, AGENTS);
    let seen = wait_until(
        "vmagent discovers every process",
        || vmagent.targets_json().map(|b| active_targets(&b)),
        |s| names(s) == want && s.len() == want.len(),
        context,
    );
    assert_eq!(seen.len(), want.len(), "{seen:?}");

    // In VictoriaMetrics: each process once, under the discovered labels.
    let once = vm
        .wait_for("count by (instance) (target_info)", WAIT, |s| {
            s.len() == want.len() && s.iter().all(|x| x.value == 1.0)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
    assert_eq!(count_by_instance(&once).len(), want.len());
    let labelled = vm
        .query("count by (nemo_gym_server_name, nemo_gym_server_type, gym_role) (up == 1)")
        .unwrap();
    let found: BTreeSet<(String, String, String)> = labelled
        .iter()
        .map(|s| {
            let l = |k: &str| s.labels.get(k).cloned().unwrap_or_default();
            (
                l("nemo_gym_server_name"),
                l("nemo_gym_server_type"),
                l("gym_role"),
            )
        })
        .collect();
    assert_eq!(found, want);
    vm.wait_for("gym_servers_active", WAIT, |s| {
        s.len() == 1 && s[0].value == SERVERS as f64
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", context()));

    let victim = "agent-0";
    send_signal(fleet.pid_of(victim), "KILL");
    wait_until(
        "the killed agent's target gone from vmagent",
        || vmagent.targets_json().map(|b| active_targets(&b)),
        |s| !s.iter().any(|x| x.name == victim) && s.len() == want.len() - 1,
        context,
    );
    // Its series went stale (vmagent marks a vanished target's series so).
    vm.wait_for(
        &format!("up{{nemo_gym_server_name=\"{victim}\"}}"),
        WAIT,
        |s| s.is_empty(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", context()));
}

#[test]
fn an_unwritable_file_sd_is_one_warning_and_the_fleet_runs_on() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _one = ONE_FLEET.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = Scratch::new("unwritable");
    let file_sd = scratch.path("no-such-dir").join("fleet.json");
    let base = free_port_block((1 + SERVERS + AGENTS) as u16);
    let mut fleet = start_fleet(
        SERVERS,
        AGENTS,
        base,
        3,
        &["--file-sd".into(), file_sd.display().to_string()],
    );
    // The HTTP SD is served all the same.
    let listed = listed_names(&sd_document(&format!("http://127.0.0.1:{base}/sd")));
    assert_eq!(listed.len(), 1 + SERVERS + AGENTS, "{listed:?}");
    let (status, output) = fleet.wait(WAIT);
    assert!(status.success(), "{output}");
    let warnings = output
        .lines()
        .filter(|l| {
            l.contains("could not write the fleet's file_sd targets") && l.contains("no-such-dir")
        })
        .count();
    assert_eq!(warnings, 1, "{output}");
}
