//! The e2e scenarios, the same for every backend: only where the numbers are
//! read (a Prometheus scraping, a VictoriaMetrics receiving OTLP) differs.

use std::time::{Duration, Instant};

use gym_testkit::{Prometheus, Sample, VictoriaMetrics};

use super::{fast_fleet_args, fleet_summary, send_signal, Fleet};

/// The configured pass ratio, and how far the measured success rate may stray
/// from it (about 4 standard deviations for ~600 verifications).
pub const PASS_RATIO: f64 = 0.7;
const TOLERANCE: f64 = 0.07;

/// A store answering PromQL: Prometheus or VictoriaMetrics.
pub trait PromQl {
    /// An instant query.
    fn query(&self, promql: &str) -> Result<Vec<Sample>, String>;
    /// Polls until `pred` holds.
    fn wait_for(
        &self,
        promql: &str,
        timeout: Duration,
        pred: &dyn Fn(&[Sample]) -> bool,
    ) -> Result<Vec<Sample>, String>;
}

impl PromQl for Prometheus {
    fn query(&self, promql: &str) -> Result<Vec<Sample>, String> {
        Prometheus::query(self, promql)
    }
    fn wait_for(
        &self,
        promql: &str,
        timeout: Duration,
        pred: &dyn Fn(&[Sample]) -> bool,
    ) -> Result<Vec<Sample>, String> {
        Prometheus::wait_for(self, promql, timeout, pred)
    }
}

impl PromQl for VictoriaMetrics {
    fn query(&self, promql: &str) -> Result<Vec<Sample>, String> {
        VictoriaMetrics::query(self, promql)
    }
    fn wait_for(
        &self,
        promql: &str,
        timeout: Duration,
        pred: &dyn Fn(&[Sample]) -> bool,
    ) -> Result<Vec<Sample>, String> {
        VictoriaMetrics::wait_for(self, promql, timeout, pred)
    }
}

/// How a fleet run is wired to its store.
pub struct Wiring<'a> {
    /// Where the numbers are read.
    pub store: &'a dyn PromQl,
    /// Extra `gym-fleet` flags (e.g. `--metrics-port`).
    pub args: Vec<String>,
    /// Extra environment (e.g. the OTLP endpoint).
    pub env: Vec<(&'static str, String)>,
    /// True when a `gym_servers_active` series comes from the orchestrator.
    pub from_orchestrator: Box<dyn Fn(&Sample) -> bool>,
}

fn one_series_equal_to(value: f64) -> impl Fn(&[Sample]) -> bool {
    move |s| s.len() == 1 && s[0].value == value
}

/// Sum over every process of the last value of `metric`.
fn last_sum(store: &dyn PromQl, metric: &str) -> f64 {
    let q = format!("sum(max_over_time({metric}[2m]))");
    let samples = store.query(&q).unwrap_or_else(|e| panic!("{q}: {e}"));
    assert_eq!(samples.len(), 1, "{q}: {samples:?}");
    samples[0].value
}

fn start(wiring: &Wiring, extra: &[&str]) -> Fleet {
    let mut args = fast_fleet_args(3, 1, PASS_RATIO);
    args.extend(wiring.args.iter().cloned());
    args.extend(extra.iter().map(|s| s.to_string()));
    Fleet::start(&args, &wiring.env)
}

fn wait_for_fleet_size(wiring: &Wiring, fleet: &Fleet, size: f64, timeout: Duration) {
    let samples = wiring
        .store
        .wait_for("gym_servers_active", timeout, &one_series_equal_to(size))
        .unwrap_or_else(|e| panic!("{e}\n{}", fleet.output()));
    assert!(
        (wiring.from_orchestrator)(&samples[0]),
        "gym_servers_active not written by the orchestrator: {samples:?}"
    );
}

/// 3 servers and 1 agent for 10 s: one fleet-size series equal to 3; every
/// `/verify` call the agent reports is a verification the servers counted;
/// every rollout is recorded; the success rate is the configured pass ratio.
pub fn ten_second_fleet_is_counted_exactly(wiring: &Wiring) {
    let store = wiring.store;
    let mut fleet = start(wiring, &["--duration", "10", "--linger", "2"]);
    wait_for_fleet_size(wiring, &fleet, 3.0, Duration::from_secs(10));

    let (status, output) = fleet.wait(Duration::from_secs(30));
    assert!(status.success(), "{status}\n{output}");
    let summary = fleet_summary(&output);
    assert_eq!(summary["crashed"], 0.0, "{output}");
    assert_eq!(summary["verify_unanswered"], 0.0, "{output}");

    let series = store
        .query("count(count_over_time(gym_servers_active[2m]))")
        .expect("query");
    assert_eq!(
        series.first().map(|s| s.value),
        Some(1.0),
        "one gym_servers_active series in the whole fleet"
    );

    let completed = last_sum(store, "gym_verify_completed_total");
    assert_eq!(
        completed, summary["verify_calls"],
        "verifications the servers counted vs /verify calls the agent reported\n{output}"
    );
    let rollouts = last_sum(store, "gym_rollout_duration_ms_milliseconds_count");
    assert!(rollouts > 0.0, "{output}");
    assert_eq!(rollouts, summary["rollouts"], "{output}");

    let succeeded = last_sum(store, "gym_verify_succeeded_total");
    let rate = succeeded / completed;
    assert!(
        (rate - PASS_RATIO).abs() < TOLERANCE,
        "success rate {rate:.3} ({succeeded}/{completed}) vs configured {PASS_RATIO}"
    );
    eprintln!(
        "fleet: {rollouts} rollouts in 10 s ({:.1}/s), {completed} verifications, success {rate:.3} vs {PASS_RATIO}",
        rollouts / 10.0
    );
}

/// SIGKILL one server: the fleet size reads 2 within 3 s and the crash is
/// reported; SIGTERM then ends the fleet with exit 0.
pub fn killed_server_drops_the_fleet_size(wiring: &Wiring) {
    let mut fleet = start(wiring, &["--duration", "60"]);
    wait_for_fleet_size(wiring, &fleet, 3.0, Duration::from_secs(10));
    let victim = fleet.pid_of("resources-1");
    send_signal(victim, "KILL");
    let killed_at = Instant::now();
    wait_for_fleet_size(wiring, &fleet, 2.0, Duration::from_secs(3));
    eprintln!("gym_servers_active read 2 after {:?}", killed_at.elapsed());
    let crash = format!("resources-1 (pid {victim}) died unexpectedly: killed by SIGKILL");
    fleet
        .wait_line(Duration::from_secs(2), |l| l.contains(&crash))
        .unwrap_or_else(|| panic!("crash not reported:\n{}", fleet.output()));

    send_signal(fleet.pid(), "TERM");
    let (status, output) = fleet.wait(Duration::from_secs(15));
    assert!(
        status.success(),
        "SIGTERM must end the fleet cleanly: {status}\n{output}"
    );
    let summary = fleet_summary(&output);
    assert_eq!(summary["crashed"], 1.0, "{output}");
    assert!(summary["rollouts"] > 0.0, "{output}");
}
