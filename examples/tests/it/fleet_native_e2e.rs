//! End to end, issue 27 §3: the real `gym-fleet`, discovered through the
//! orchestrator's `/sd` by a real Prometheus 2.53 with native histograms
//! and exemplar storage on (and `scrape_classic_histograms`): every
//! histogram family of every process is stored native and classic, a
//! quantile answers over both, and the agents' rollout exemplars carry
//! trace ids the agents logged. The dashboard's latency panels answer from
//! the native histograms alone. A second Prometheus with exemplar storage
//! alone scrapes OpenMetrics text and stores exemplars the agents logged
//! too.
#![cfg(all(feature = "prom", not(feature = "noop")))]

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::support::{panel_queries, send_signal, Fleet};
use gym_testkit::{free_port_block, require, Prometheus, Sample, Tool};

const SERVERS: usize = 2;
const AGENTS: usize = 1;
const WAIT: Duration = Duration::from_secs(40);

/// Polls `promql` until it answers `want` series, each with a value above 0.
fn wait_for_series(prometheus: &Prometheus, promql: &str, want: usize, fleet: &Fleet) {
    prometheus
        .wait_for(promql, WAIT, |s| {
            s.len() == want && s.iter().all(|s| s.value > 0.0)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", prometheus.log_tail(), fleet.output()));
}

#[test]
fn prometheus_stores_native_histograms_and_exemplars_of_the_whole_fleet() {
    require(Tool::Prometheus);
    let base = free_port_block((1 + SERVERS + AGENTS) as u16);
    let args: Vec<String> = [
        "--servers",
        &SERVERS.to_string(),
        "--agents",
        &AGENTS.to_string(),
        "--seed",
        "27",
        "--generate-ms",
        "100..3000",
        "--verify-ms",
        "5..80",
        "--concurrency",
        "4",
        "--drain",
        "2",
        "--duration",
        "90",
        "--metrics-port",
        &base.to_string(),
    ]
    .map(String::from)
    .to_vec();
    let fleet = Fleet::start(&args, &[("RUST_LOG", "gym_fleet=debug,warn".to_string())]);
    fleet
        .wait_line(WAIT, |l| l.starts_with("processes:"))
        .unwrap_or_else(|| panic!("the fleet did not start:\n{}", fleet.output()));
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gym\n    \
         scrape_classic_histograms: true\n    http_sd_configs:\n      - url: http://127.0.0.1:{base}/sd\n        \
         refresh_interval: 1s\n"
    );
    let prometheus =
        Prometheus::start_with_features(&config, &["native-histograms", "exemplar-storage"])
            .unwrap();
    // Without native histograms, Prometheus asks for OpenMetrics text.
    let text_only = Prometheus::start_with_features(&config, &["exemplar-storage"]).unwrap();

    // Native and classic, for every histogram family of every process.
    for (family, processes) in [
        ("gym_rollout_duration_ms_milliseconds", AGENTS),
        ("gym_verify_duration_ms_milliseconds", SERVERS),
        ("http_server_request_duration_seconds", SERVERS),
    ] {
        let by_process = |e: &str| format!("sum by (nemo_gym_server_name) ({e})");
        wait_for_series(
            &prometheus,
            &by_process(&format!("histogram_count({family})")),
            processes,
            &fleet,
        );
        wait_for_series(
            &prometheus,
            &by_process(&format!("{family}_count")),
            processes,
            &fleet,
        );
    }
    // The dashboard's latency panels read the native histograms: with the
    // classic buckets' names made absent, every one still answers.
    for (title, expr) in panel_queries("gym") {
        if !expr.contains("histogram_quantile") {
            continue;
        }
        let native_only = expr.replace("_bucket{", "_bucket_absent{");
        let answered = |s: &[Sample]| !s.is_empty() && s.iter().all(|s| s.value.is_finite());
        if let Err(e) = prometheus.wait_for(&native_only, WAIT, answered) {
            panic!("{title}: {e}\n{}", prometheus.log_tail());
        }
    }
    let rollout = "gym_rollout_duration_ms_milliseconds";
    for q in [
        format!("histogram_quantile(0.5, sum({rollout}))"),
        format!("histogram_quantile(0.5, sum by (le) ({rollout}_bucket))"),
    ] {
        let p50 = prometheus.query(&q).unwrap();
        let ms = p50.first().map_or(f64::NAN, |s| s.value);
        // Rollouts take 100 ms to 3 s of generation, plus a verification.
        assert!((100.0..=5000.0).contains(&ms), "{q}: {p50:?}");
    }

    // No scrape was refused (a native histogram whose count is not its
    // buckets' total fails the whole scrape): up never left 1.
    let up = prometheus
        .query(r#"min_over_time(up{job="gym"}[5m])"#)
        .unwrap();
    assert_eq!(up.len(), 1 + SERVERS + AGENTS, "{up:?}");
    assert!(
        up.iter().all(|s| s.value == 1.0),
        "{up:?}\n{}",
        prometheus.log_tail()
    );

    // The exemplars lead to rollouts the agent logged, from protobuf and
    // from OpenMetrics text alike: the agents' own, and the servers'
    // verifications, which run in the trace the agent's `traceparent` named.
    // Text carries them on the classic buckets, protobuf on the native
    // histogram too.
    let verify = "gym_verify_duration_ms_milliseconds";
    let checks = [("protobuf", &prometheus), ("text", &text_only)];
    for ((format, prometheus), family) in
        checks.into_iter().flat_map(|c| [(c, rollout), (c, verify)])
    {
        let deadline = Instant::now() + WAIT;
        let stored = loop {
            let ids: BTreeSet<String> = prometheus
                .exemplar_trace_ids(&format!(r#"{{__name__=~"{family}(_bucket)?"}}"#))
                .unwrap()
                .into_iter()
                .collect();
            if ids.len() >= 3 || Instant::now() > deadline {
                break ids;
            }
            std::thread::sleep(Duration::from_millis(500));
        };
        let output = fleet.output();
        let logged: BTreeSet<&str> = output
            .lines()
            .filter_map(|l| l.split_once(" is trace ").map(|(_, id)| id.trim()))
            .collect();
        assert!(
            stored.len() >= 3,
            "{format} {family}: {stored:?}\n{}",
            prometheus.log_tail()
        );
        for id in &stored {
            assert!(
                logged.contains(id.as_str()),
                "{format} {family}: {id} was never logged; logged: {}",
                logged.len()
            );
        }
    }
    // Done: the fleet stops as on Ctrl-C, well before its --duration.
    let mut fleet = fleet;
    send_signal(fleet.pid(), "TERM");
    let (status, _) = fleet.wait(Duration::from_secs(30));
    assert!(status.success(), "{}", fleet.output());
}
