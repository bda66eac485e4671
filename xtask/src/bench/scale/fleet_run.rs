//! One fleet size measured: a real gym-fleet (release build, Prometheus
//! backend, process metrics on) discovered by a real Prometheus server
//! through the orchestrator's `GET /sd`, snapshotted at fixed times after
//! the launch.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gym_testkit::{free_port_block, http_get, terminate, Prometheus, Sample, TempDir};

use super::figures::{SizeFigures, Snapshot, Stats};
use super::proc_stat::{cpu_ticks, rss_kib, ticks_per_second};
use super::sd_cost;

/// The server-type label every discovered target carries.
const TYPE_LABEL: &str = "nemo_gym_server_type";
/// The orchestrator's server type.
const ORCHESTRATOR: &str = "orchestrator";

/// What to run at one size.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Resources servers.
    pub servers: usize,
    /// Agents.
    pub agents: usize,
    /// Snapshot times after the launch, ascending.
    pub snapshots: Vec<Duration>,
    /// Scrape interval and SD refresh.
    pub interval: Duration,
}

impl Plan {
    /// A fleet of `processes` in all, split as the issue's 150 resources
    /// servers to 50 agents.
    pub fn of(processes: usize, snapshots: Vec<Duration>, interval: Duration) -> Self {
        let children = processes.saturating_sub(1).max(2);
        let servers = (children * 3).div_ceil(4).min(children - 1);
        Self {
            servers,
            agents: children - servers,
            snapshots,
            interval,
        }
    }

    fn processes(&self) -> usize {
        1 + self.servers + self.agents
    }
}

/// The launched fleet: stopped (TERM, then KILL) on drop, by PID.
struct RunningFleet {
    child: Child,
    dir: TempDir,
}

impl RunningFleet {
    fn output(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stdout")).unwrap_or_default()
    }

    /// Every process's pid by server type (from the launch table's
    /// `NAME pid PID` lines), the orchestrator's own included.
    fn pids(&self) -> BTreeMap<String, Vec<u32>> {
        let mut by_type: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        by_type
            .entry(ORCHESTRATOR.to_string())
            .or_default()
            .push(self.child.id());
        for line in self.output().lines() {
            let mut words = line.split_whitespace();
            let (Some(name), Some("pid"), Some(pid)) = (words.next(), words.next(), words.next())
            else {
                continue;
            };
            let Ok(pid) = pid.parse::<u32>() else {
                continue;
            };
            if name == ORCHESTRATOR {
                // Listed first in the table, and already counted above.
                continue;
            }
            let kind = if name.starts_with("agent-") {
                "responses_api_agents"
            } else {
                "resources_servers"
            };
            by_type.entry(kind.to_string()).or_default().push(pid);
        }
        by_type
    }

    fn stop(&mut self) {
        terminate(&mut self.child, Duration::from_secs(60));
    }
}

impl Drop for RunningFleet {
    fn drop(&mut self) {
        self.stop();
    }
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Waits up to `timeout` for `done`, polling every 100 ms.
fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn prometheus_config(sd_url: &str, interval: Duration) -> String {
    let every = format!("{}s", interval.as_secs().max(1));
    format!(
        "global:\n  scrape_interval: {every}\n  scrape_timeout: {every}\n\
         scrape_configs:\n  - job_name: gym-fleet\n    http_sd_configs:\n      - url: '{sd_url}'\n        refresh_interval: {every}\n"
    )
}

fn by_type(samples: &[Sample], scale: f64) -> BTreeMap<String, Stats> {
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in samples {
        let kind = s.labels.get(TYPE_LABEL).cloned().unwrap_or_default();
        values.entry(kind).or_default().push(s.value * scale);
    }
    values
        .into_iter()
        .map(|(k, v)| (k, Stats::of(&v)))
        .collect()
}

/// Fetches every target's `/metrics` plain and with gzip: bytes by server type.
fn exposition_bytes(targets: &[Sample]) -> (BTreeMap<String, Stats>, BTreeMap<String, Stats>) {
    let mut plain: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut gzip: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for t in targets {
        let (Some(instance), Some(kind)) = (t.labels.get("instance"), t.labels.get(TYPE_LABEL))
        else {
            continue;
        };
        let url = format!("http://{instance}/metrics");
        if let Ok((200, _, body)) = http_get(&url, &[]) {
            plain
                .entry(kind.clone())
                .or_default()
                .push(body.len() as f64);
        }
        if let Ok((200, headers, body)) = http_get(&url, &[("Accept-Encoding", "gzip")]) {
            let gzipped = headers
                .iter()
                .any(|(n, v)| n == "content-encoding" && v.contains("gzip"));
            if gzipped {
                gzip.entry(kind.clone())
                    .or_default()
                    .push(body.len() as f64);
            }
        }
    }
    let summarise = |m: BTreeMap<String, Vec<f64>>| {
        m.into_iter()
            .map(|(k, v)| (k, Stats::of(&v)))
            .collect::<BTreeMap<_, _>>()
    };
    (summarise(plain), summarise(gzip))
}

/// CPU ticks of every pid (exited ones count nothing).
fn ticks(pids: &BTreeMap<String, Vec<u32>>) -> BTreeMap<u32, u64> {
    pids.values()
        .flatten()
        .filter_map(|&p| cpu_ticks(p).map(|t| (p, t)))
        .collect()
}

/// Runs `plan` with `gym_fleet`; every server it started is stopped on return.
///
/// # Errors
/// The fleet or Prometheus did not start, or never showed every process.
pub fn measure(gym_fleet: &Path, plan: &Plan) -> Result<SizeFigures, String> {
    let processes = plan.processes();
    let last = plan
        .snapshots
        .last()
        .copied()
        .unwrap_or(Duration::from_secs(60));
    let base = free_port_block(u16::try_from(processes).map_err(|_| "too many processes")?);
    let sd_url = format!("http://127.0.0.1:{base}/sd");
    // The scraper first, as in production: it finds each process as soon
    // as the orchestrator lists it.
    let prometheus = Prometheus::start_with_config(&prometheus_config(&sd_url, plan.interval))?;

    let dir = TempDir::new("scale-fleet")?;
    let stdout = std::fs::File::create(dir.path().join("stdout"))
        .map_err(|e| format!("creating the fleet's log: {e}"))?;
    let stderr = stdout
        .try_clone()
        .map_err(|e| format!("creating the fleet's log: {e}"))?;
    let launched = Instant::now();
    let mut args =
        gym_testkit::scale_fleet::args(plan.servers, plan.agents, last + Duration::from_secs(120));
    args.extend(
        [
            "--metrics-port",
            &base.to_string(),
            "--run-id",
            "scale-bench",
        ]
        .map(String::from),
    );
    let child = Command::new(gym_fleet)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", gym_fleet.display()))?;
    let mut fleet = RunningFleet { child, dir };
    let bound = Duration::from_secs(60 + processes as u64 / 2);
    if !wait_until(bound, || fleet.output().contains("processes:")) {
        return Err(format!("the fleet did not start:\n{}", fleet.output()));
    }
    prometheus
        .wait_for("count(up == 1)", bound, |s| {
            s.first().is_some_and(|s| s.value == processes as f64)
        })
        .map_err(|e| format!("{processes} processes not all scraped: {e}"))?;
    eprintln!(
        "==> bench scale: {processes} processes scraped {:.1} s after the launch",
        launched.elapsed().as_secs_f64()
    );
    let pids = fleet.pids();
    let hz = ticks_per_second();
    let scraper = prometheus.pid();
    let mut window_start = (Instant::now(), ticks(&pids), cpu_ticks(scraper));
    let mut snapshots = Vec::new();
    let mut launch_to_first_scrape = Stats::default();
    for &at in &plan.snapshots {
        if let Some(rest) = at.checked_sub(launched.elapsed()) {
            std::thread::sleep(rest);
        }
        let window = window_start.0.elapsed();
        let after = ticks(&pids);
        let cpu_pct = |pids: &[u32]| {
            let used: u64 = pids
                .iter()
                .filter_map(|p| Some(after.get(p)?.saturating_sub(*window_start.1.get(p)?)))
                .sum();
            100.0 * used as f64 / hz / window.as_secs_f64()
        };
        let orchestrator_cpu_pct = cpu_pct(pids.get(ORCHESTRATOR).map_or(&[][..], Vec::as_slice));
        let all: Vec<u32> = pids.values().flatten().copied().collect();
        let fleet_cpu_pct = cpu_pct(&all);
        let scraper_cpu_pct = match (cpu_ticks(scraper), window_start.2) {
            (Some(now), Some(then)) => {
                100.0 * now.saturating_sub(then) as f64 / hz / window.as_secs_f64()
            }
            _ => 0.0,
        };
        let scraped_samples_per_s = prometheus
            .query(&format!(
                "sum(sum_over_time(scrape_samples_scraped[{0}s])) / {0}",
                window.as_secs().max(1)
            ))?
            .first()
            .map_or(0.0, |s| s.value);

        let series = prometheus.query("scrape_samples_scraped")?;
        let (exposition_plain, exposition_gzip) = exposition_bytes(&series);
        let durations = prometheus.raw_samples(&format!(
            "scrape_duration_seconds[{}s]",
            window.as_secs().max(1)
        ))?;
        let scrape_ms: Vec<f64> = durations
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1 * 1000.0))
            .collect();
        let rss_by_type = pids
            .iter()
            .map(|(kind, list)| {
                let v: Vec<f64> = list.iter().filter_map(|&p| rss_kib(p)).collect();
                (kind.clone(), Stats::of(&v))
            })
            .collect();
        let sd = sd_cost::measure(&sd_url, processes, None, 50)?;
        if snapshots.is_empty() {
            launch_to_first_scrape = first_scrape(&prometheus, launched.elapsed())?;
        }
        let snapshot = Snapshot {
            after_s: launched.elapsed().as_secs_f64().round(),
            series: by_type(&series, 1.0),
            exposition_plain,
            exposition_gzip,
            scrape_ms: Stats::of(&scrape_ms),
            rss_kib: rss_by_type,
            orchestrator_cpu_pct,
            fleet_cpu_pct,
            scraper_cpu_pct,
            scraper_rss_kib: rss_kib(scraper).unwrap_or(0.0),
            scraped_samples_per_s,
            sd,
        };
        eprintln!(
            "==> bench scale: {processes} processes at {} s: series by type {:?}, scrape p99 {:.2} ms, orchestrator CPU {:.1}%",
            snapshot.after_s,
            snapshot.series.iter().map(|(k, s)| (k.as_str(), s.p50)).collect::<Vec<_>>(),
            snapshot.scrape_ms.p99,
            snapshot.orchestrator_cpu_pct
        );
        snapshots.push(snapshot);
        window_start = (Instant::now(), ticks(&pids), cpu_ticks(scraper));
    }
    fleet.stop();
    Ok(SizeFigures {
        processes,
        servers: plan.servers,
        agents: plan.agents,
        launch_to_first_scrape_s: launch_to_first_scrape,
        snapshots,
    })
}

/// Per process: its first stored `up` sample against its own start time
/// (`process_start_time_seconds`, from the process metrics).
fn first_scrape(prometheus: &Prometheus, since_launch: Duration) -> Result<Stats, String> {
    let range = since_launch.as_secs() + 5;
    let first: BTreeMap<String, f64> = prometheus
        .raw_samples(&format!("up[{range}s]"))?
        .into_iter()
        .filter_map(|s| {
            let instance = s.labels.get("instance")?.clone();
            let (at, _) = s.points.iter().find(|p| p.1 == 1.0)?;
            Some((instance, *at))
        })
        .collect();
    let started = prometheus.query("process_start_time_seconds")?;
    let delays: Vec<f64> = started
        .iter()
        .filter_map(|s| Some(first.get(s.labels.get("instance")?)? - s.value))
        .collect();
    if delays.is_empty() {
        return Err(format!(
            "no process start times to compare with the first scrapes (now {:.0})",
            now_unix()
        ));
    }
    Ok(Stats::of(&delays))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_s_split_of_servers_and_agents() {
        let p = Plan::of(201, vec![], Duration::from_secs(5));
        assert_eq!((p.servers, p.agents, p.processes()), (150, 50, 201));
        let p = Plan::of(10, vec![], Duration::from_secs(5));
        assert_eq!((p.servers, p.agents, p.processes()), (7, 2, 10));
        let p = Plan::of(2, vec![], Duration::from_secs(5));
        assert_eq!((p.servers, p.agents), (1, 1));
    }
}
