//! End to end, issue 18 §2 at a small size: one gym-fleet discovered through
//! the orchestrator's `GET /sd` by two real distributed scrape engines at
//! once, each sharding the fleet across two members:
//!
//! - vmagent in cluster mode (`-promscrape.cluster.membersCount=2`,
//!   `-promscrape.cluster.memberNum=0|1`) remote-writing into one
//!   VictoriaMetrics;
//! - two Prometheus agent-mode shards split by `hashmod` relabelling,
//!   remote-writing into another VictoriaMetrics.
//!
//! Checked by PromQL on each VictoriaMetrics: every process present exactly
//! once (one member or shard per target: each labels what it scrapes), both
//! members busy, exactly one fleet-size series equal to the live servers; and
//! after SIGKILL of some servers the fleet size and the discovered targets
//! follow within two scrape intervals (and a second); at the end, after an orderly stop,
//! no agent's rollouts are counted twice: the sum over agents of the last
//! scraped rollout count is at most the agents' own totals (and short of
//! them by at most what the last scrape interval can hold).
//!
//! Both engines run on the kit's ready-to-use files of SCALE.md's plan,
//! `deploy/scale/` (rendered as their comments say): the vmagent members'
//! flags and shared scrape configuration, the Prometheus shards'
//! configuration.
//!
//! The size defaults to 15 resources servers and 5 agents (21 processes);
//! the full size of the issue is
//! `GYM_SCALE_SERVERS=150 GYM_SCALE_AGENTS=50 cargo test -p gym-metrics-examples --test fleet_scale_e2e -- --nocapture`.
#![cfg(all(feature = "prom", not(feature = "noop")))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{send_signal, Fleet};
use gym_testkit::{
    free_port_block, require, Prometheus, Sample, TempDir, Tool, VictoriaMetrics, Vmagent,
};

/// The label each Prometheus agent shard adds to what it scrapes
/// (`deploy/scale/prometheus-agent-shard.yml`).
const SHARD_LABEL: &str = "prometheus_shard";
/// The label each vmagent member adds (`deploy/scale/vmagent-member.flags`).
const MEMBER_LABEL: &str = "vmagent_member";
/// Members of the vmagent cluster, and Prometheus shards.
const SHARDS: u32 = 2;
/// The scrape interval. 5 s, not less: Prometheus 2.53 hands a changed
/// target list to its scrapers only on a fixed 5 s tick, so its targets
/// follow a change within one SD refresh and that tick, which fits in the
/// issue's two intervals only from a 5 s interval up (at 2 s it took 7 s).
const INTERVAL: Duration = Duration::from_secs(5);
/// How often both engines re-read `GET /sd` (at most the interval, as
/// `deploy/scale/` advises).
const SD_REFRESH: Duration = Duration::from_secs(1);

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .map(|v| v.parse().unwrap_or_else(|e| panic!("{var}={v:?}: {e}")))
        .unwrap_or(default)
}

/// Bounded waits grow with the fleet (launching 200 processes takes a while).
fn bound(processes: usize) -> Duration {
    Duration::from_secs(30 + processes as u64 / 4)
}

/// The kit's ready-to-use files for the plan of SCALE.md, which this test runs.
fn deploy_scale() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/scale")
}

/// `deploy/scale/<file>` with every `${NAME}` replaced as `envsubst` would
/// (the files' documented way). Panics on a placeholder left unset, so the
/// files and this test cannot drift apart.
fn render(file: &str, vars: &[(&str, String)]) -> String {
    let path = deploy_scale().join(file);
    let mut text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for (name, value) in vars {
        text = text.replace(&format!("${{{name}}}"), value);
    }
    assert!(
        !text.contains("${"),
        "{file}: a placeholder is left unset:\n{text}"
    );
    text
}

/// A Prometheus agent shard: `deploy/scale/prometheus-agent-shard.yml`, rendered.
fn start_prometheus_shard(sd_url: &str, shard: u32, remote_write: &str) -> Prometheus {
    let config = render(
        "prometheus-agent-shard.yml",
        &[
            ("SCRAPE_INTERVAL", format!("{}s", INTERVAL.as_secs())),
            ("SD_REFRESH_INTERVAL", format!("{}s", SD_REFRESH.as_secs())),
            ("GYM_SD_URL", sd_url.to_string()),
            ("SHARDS", SHARDS.to_string()),
            ("SHARD", shard.to_string()),
            ("REMOTE_WRITE_URL", remote_write.to_string()),
        ],
    );
    Prometheus::start_agent_with_config(&config).expect("prometheus agent starts")
}

/// A vmagent cluster member on `deploy/scale/vmagent-member.flags` and
/// `vmagent-scrape.yml`, its remote-write buffer in `data`.
fn start_vmagent_member(sd_url: &str, member: u32, remote_write: &str, data: &Path) -> Vmagent {
    let every = format!("{}s", INTERVAL.as_secs());
    let flags: Vec<String> = render(
        "vmagent-member.flags",
        &[
            ("CONFIG_DIR", deploy_scale().display().to_string()),
            ("DATA_DIR", data.display().to_string()),
            ("SD_REFRESH_INTERVAL", format!("{}s", SD_REFRESH.as_secs())),
            ("MEMBERS", SHARDS.to_string()),
            ("MEMBER", member.to_string()),
            ("REMOTE_WRITE_URL", remote_write.to_string()),
        ],
    )
    .lines()
    .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    .map(str::to_string)
    .collect();
    let env = [
        ("GYM_SD_URL".to_string(), sd_url.to_string()),
        ("GYM_SCRAPE_INTERVAL".to_string(), every),
    ];
    Vmagent::start_with_flags(&flags, &env).expect("vmagent starts")
}

fn by_label(samples: &[Sample], label: &str) -> BTreeMap<String, f64> {
    samples
        .iter()
        .map(|s| (s.labels.get(label).cloned().unwrap_or_default(), s.value))
        .collect()
}

/// The sharded checks on one engine's VictoriaMetrics: `processes` targets
/// each scraped by exactly one member (`member_label`), every member busy,
/// one fleet-size series equal to `servers`.
fn every_process_once(
    vm: &VictoriaMetrics,
    member_label: &str,
    processes: usize,
    servers: usize,
    context: &dyn Fn() -> String,
) {
    let wait = bound(processes);
    let per_instance = vm
        .wait_for(
            &format!("count by (instance) (up{{{member_label}!=\"\"}} == 1)"),
            wait,
            |s| s.len() == processes,
        )
        .unwrap_or_else(|e| panic!("{e}\n{}", context()));
    let twice: Vec<_> = by_label(&per_instance, "instance")
        .into_iter()
        .filter(|(_, n)| *n != 1.0)
        .collect();
    assert!(
        twice.is_empty(),
        "scraped by more than one member: {twice:?}"
    );
    let per_member = vm
        .query(&format!("count by ({member_label}) (up == 1)"))
        .unwrap();
    let shares = by_label(&per_member, member_label);
    assert_eq!(
        shares.len(),
        SHARDS as usize,
        "every member scrapes a share: {shares:?}"
    );
    assert_eq!(shares.values().sum::<f64>(), processes as f64, "{shares:?}");
    eprintln!("{member_label}: {processes} processes, shares {shares:?}");
    vm.wait_for("gym_servers_active", wait, |s| {
        s.len() == 1 && s[0].value == servers as f64
    })
    .unwrap_or_else(|e| {
        panic!(
            "exactly one fleet-size series of {servers}: {e}\n{}",
            context()
        )
    });
}

/// The active targets' server names across `bodies` (each member's
/// `/api/v1/targets`).
fn active_names(bodies: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for body in bodies {
        let doc: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        for t in doc["data"]["activeTargets"]
            .as_array()
            .into_iter()
            .flatten()
        {
            names.push(
                t["labels"]["nemo_gym_server_name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
    }
    names.sort();
    names
}

#[test]
fn two_sharded_engines_scrape_every_discovered_process_exactly_once() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for tool in [Tool::Prometheus, Tool::VictoriaMetrics, Tool::Vmagent] {
        require(tool);
    }
    let servers = size("GYM_SCALE_SERVERS", 15);
    let agents = size("GYM_SCALE_AGENTS", 5);
    assert!(servers >= 2, "GYM_SCALE_SERVERS must be 2 or more");
    // The issue kills 20 of 150 servers; at least one.
    let killed = (servers * 20 / 150).max(1);
    let processes = 1 + servers + agents;
    let wait = bound(processes);

    let base = free_port_block(processes as u16);
    let mut args = gym_testkit::scale_fleet::args(servers, agents, wait * 4);
    args.extend(["--metrics-port", &base.to_string(), "--run-id", "scale-e2e"].map(String::from));
    let started = Instant::now();
    let mut fleet = Fleet::start(&args, &[]);
    fleet
        .wait_line(wait, |l| l.starts_with("processes:"))
        .unwrap_or_else(|| panic!("the fleet did not start:\n{}", fleet.output()));
    eprintln!("{processes} processes ready in {:?}", started.elapsed());
    let sd_url = format!("http://127.0.0.1:{base}/sd");

    let vm_vmagent = VictoriaMetrics::start().expect("victoria-metrics starts");
    let vm_prometheus = VictoriaMetrics::start().expect("victoria-metrics starts");
    let buffers = TempDir::new("vmagent-members").expect("a temp dir");
    let members: Vec<Vmagent> = (0..SHARDS)
        .map(|number| {
            let data = buffers.path().join(number.to_string());
            let remote = format!("{}/api/v1/write", vm_vmagent.url());
            start_vmagent_member(&sd_url, number, &remote, &data)
        })
        .collect();
    let shards: Vec<Prometheus> = (0..SHARDS)
        .map(|shard| {
            let remote = format!("{}/api/v1/write", vm_prometheus.url());
            start_prometheus_shard(&sd_url, shard, &remote)
        })
        .collect();
    let context = || {
        let mut text = fleet.output();
        for m in &members {
            text.push_str(&format!("\n--- vmagent:\n{}", m.log_tail()));
        }
        for s in &shards {
            text.push_str(&format!("\n--- prometheus agent:\n{}", s.log_tail()));
        }
        text
    };

    every_process_once(&vm_vmagent, MEMBER_LABEL, processes, servers, &context);
    every_process_once(&vm_prometheus, SHARD_LABEL, processes, servers, &context);

    // SIGKILL `killed` servers: the fleet size and the discovered targets follow.
    let victims: Vec<String> = (0..killed).map(|i| format!("resources-{i}")).collect();
    let pids: Vec<u32> = victims.iter().map(|v| fleet.pid_of(v)).collect();
    let killed_at = Instant::now();
    for pid in pids {
        send_signal(pid, "KILL");
    }
    let live = servers - killed;
    // The bound: two scrape intervals (the SD is re-read every
    // interval too), and a second for the orchestrator to see the deaths,
    // the scrapers to apply the new list and the remote write to land.
    let within = 2 * INTERVAL + Duration::from_secs(1);
    for (name, vm) in [
        ("vmagent", &vm_vmagent),
        ("prometheus agents", &vm_prometheus),
    ] {
        vm.wait_for("gym_servers_active", wait, |s| {
            s.len() == 1 && s[0].value == live as f64
        })
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", context()));
        let followed = killed_at.elapsed();
        eprintln!("{name}: fleet size {live} in VictoriaMetrics {followed:?} after the kill");
        assert!(
            followed <= within,
            "{name}: the fleet size followed the kill in {followed:?}, more than {within:?}"
        );
    }
    let gone = |bodies: &[String]| {
        let names = active_names(bodies);
        names.len() == processes - killed && !names.iter().any(|n| victims.contains(n))
    };
    let deadline = Instant::now() + wait;
    let (mut vmagent_followed, mut shards_followed) = (None, None);
    loop {
        let vmagent_bodies: Vec<String> = members
            .iter()
            .filter_map(|m| m.targets_json().ok())
            .collect();
        let shard_bodies: Vec<String> = shards
            .iter()
            .filter_map(|s| s.targets_json().ok())
            .collect();
        if vmagent_followed.is_none()
            && vmagent_bodies.len() == members.len()
            && gone(&vmagent_bodies)
        {
            vmagent_followed = Some(killed_at.elapsed());
        }
        if shards_followed.is_none() && shard_bodies.len() == shards.len() && gone(&shard_bodies) {
            shards_followed = Some(killed_at.elapsed());
        }
        if let (Some(vmagent), Some(shards)) = (vmagent_followed, shards_followed) {
            eprintln!(
                "killed targets gone from every vmagent member {vmagent:?} and every Prometheus shard {shards:?} after the kill"
            );
            assert!(
                vmagent <= within && shards <= within,
                "the discovered targets followed the kill in {vmagent:?} (vmagent) and {shards:?} (Prometheus), more than {within:?}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the killed targets are still discovered after {wait:?}: vmagent {:?} prometheus {:?}\n{}",
            active_names(&vmagent_bodies),
            active_names(&shard_bodies),
            context()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Run a while longer, then stop in order: every agent's own total against
    // what each engine stored for it.
    std::thread::sleep(Duration::from_secs(10).saturating_sub(killed_at.elapsed()));
    send_signal(fleet.pid(), "TERM");
    let (status, output) = fleet.wait(wait);
    assert!(status.success(), "{output}");
    let own: f64 = (0..agents)
        .map(|i| crate::support::agent_completed(&output, &format!("agent-{i}")))
        .sum();
    assert!(own > 0.0, "the agents completed no rollouts:\n{output}");
    // Per agent, a rollout takes at least 1 s (--generate-ms 1000..): the last
    // scrape before the agent stopped misses at most one interval's worth
    // (plus the one in flight).
    let missable = agents as f64 * (INTERVAL.as_secs_f64() + 1.0);
    let stored = "sum(max_over_time(gym_rollout_duration_ms_milliseconds_count{nemo_gym_server_type=\"responses_api_agents\"}[10m]))";
    for (name, vm) in [
        ("vmagent", &vm_vmagent),
        ("prometheus agents", &vm_prometheus),
    ] {
        let samples = vm.query(stored).unwrap();
        let value = samples.first().map(|s| s.value).unwrap_or(0.0);
        eprintln!("{name}: agents' rollouts stored {value}, agents' own count {own}");
        assert!(
            value <= own && value >= own - missable,
            "{name}: stored {value} rollouts, the agents counted {own} (at most {missable} may be unscraped)"
        );
    }
}
