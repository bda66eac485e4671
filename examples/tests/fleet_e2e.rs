//! End to end: the real `gym-fleet` binary, 3 servers and 1 agent, scraped by a
//! real Prometheus (`prom`) or pushing OTLP to a real VictoriaMetrics (`otel`).
//! Skipped loudly when the tools are not provisioned (`cargo xtask tools`),
//! failed when they are required (CI).
#![cfg(not(feature = "noop"))]

mod support;

#[cfg(feature = "prom")]
mod prom {
    use std::time::{Duration, Instant};

    use gym_testkit::{require, Prometheus, Tool};

    use super::support::{fast_fleet_args, fleet_summary, free_port_block, send_signal, Fleet};

    const PASS_RATIO: f64 = 0.7;
    const TOLERANCE: f64 = 0.07;
    const PROCESSES: u16 = 5; // orchestrator, 3 servers, 1 agent

    /// A Prometheus scraping every second the block of `/metrics` ports at `base`.
    fn prometheus_for(base: u16) -> Prometheus {
        let targets: Vec<String> = (base..base + PROCESSES)
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        Prometheus::start(&targets, Duration::from_secs(1)).expect("prometheus starts")
    }

    fn one_series_equal_to(value: f64) -> impl Fn(&[gym_testkit::Sample]) -> bool {
        move |s| s.len() == 1 && s[0].value == value
    }

    /// Sum over every process of the last value of `metric`.
    fn last_sum(prometheus: &Prometheus, metric: &str) -> f64 {
        let q = format!("sum(max_over_time({metric}[2m]))");
        let samples = prometheus.query(&q).expect("query");
        assert_eq!(samples.len(), 1, "{q}: {samples:?}");
        samples[0].value
    }

    #[test]
    fn a_ten_second_fleet_is_counted_exactly_by_prometheus() {
        if require(Tool::Prometheus).is_none() {
            return;
        }
        let base = free_port_block(PROCESSES);
        let prometheus = prometheus_for(base);
        let mut args = fast_fleet_args(3, 1, PASS_RATIO);
        args.extend(
            [
                "--duration",
                "10",
                "--linger",
                "2",
                "--metrics-port",
                &base.to_string(),
            ]
            .map(String::from),
        );
        let mut fleet = Fleet::start(&args, &[]);

        let active = prometheus
            .wait_for(
                "gym_servers_active",
                Duration::from_secs(10),
                one_series_equal_to(3.0),
            )
            .unwrap_or_else(|e| panic!("{e}\n{}", fleet.output()));
        assert_eq!(
            active[0].labels["instance"],
            format!("127.0.0.1:{base}"),
            "written by the orchestrator"
        );

        let (status, output) = fleet.wait(Duration::from_secs(30));
        assert!(status.success(), "{status}\n{output}");
        let summary = fleet_summary(&output);
        assert_eq!(summary["crashed"], 0.0, "{output}");
        assert_eq!(summary["verify_unanswered"], 0.0, "{output}");

        let series = prometheus
            .query("count(count_over_time(gym_servers_active[2m]))")
            .expect("query");
        assert_eq!(
            series[0].value, 1.0,
            "one gym_servers_active series in the whole fleet"
        );

        let completed = last_sum(&prometheus, "gym_verify_completed_total");
        assert_eq!(
            completed, summary["verify_calls"],
            "verifications the servers counted vs /verify calls the agent reported\n{output}"
        );
        let rollouts = last_sum(&prometheus, "gym_rollout_duration_ms_milliseconds_count");
        assert!(rollouts > 0.0, "{output}");
        assert_eq!(rollouts, summary["rollouts"], "{output}");

        let succeeded = last_sum(&prometheus, "gym_verify_succeeded_total");
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

    #[test]
    fn a_killed_server_drops_the_fleet_size_within_three_seconds() {
        if require(Tool::Prometheus).is_none() {
            return;
        }
        let base = free_port_block(PROCESSES);
        let prometheus = prometheus_for(base);
        let mut args = fast_fleet_args(3, 1, PASS_RATIO);
        args.extend(["--duration", "60", "--metrics-port", &base.to_string()].map(String::from));
        let mut fleet = Fleet::start(&args, &[]);

        prometheus
            .wait_for(
                "gym_servers_active",
                Duration::from_secs(10),
                one_series_equal_to(3.0),
            )
            .unwrap_or_else(|e| panic!("{e}\n{}", fleet.output()));
        let victim = fleet.pid_of("resources-1");
        send_signal(victim, "KILL");
        let killed_at = Instant::now();
        prometheus
            .wait_for(
                "gym_servers_active",
                Duration::from_secs(3),
                one_series_equal_to(2.0),
            )
            .unwrap_or_else(|e| panic!("{e}\n{}", fleet.output()));
        eprintln!("gym_servers_active read 2 after {:?}", killed_at.elapsed());
        fleet
            .wait_line(Duration::from_secs(2), |l| {
                l.contains(&format!(
                    "resources-1 (pid {victim}) died unexpectedly: killed by SIGKILL"
                ))
            })
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
}
