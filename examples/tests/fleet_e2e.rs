//! End to end: the real `gym-fleet` binary, 3 servers and 1 agent, scraped by a
//! real Prometheus (`prom`) or pushing OTLP to a real VictoriaMetrics (`otel`),
//! with the same scenarios (`support/scenarios.rs`). Skipped loudly when the
//! tools are not provisioned (`cargo xtask tools`), failed when they are
//! required (CI).
#![cfg(not(feature = "noop"))]

mod support;

#[cfg(feature = "prom")]
mod prom {
    use std::time::Duration;

    use gym_testkit::{free_port_block, require, Prometheus, Tool};

    use super::support::scenarios::{self, Wiring};

    const PROCESSES: u16 = 5; // orchestrator, 3 servers, 1 agent

    /// A Prometheus scraping every second the fleet's `/metrics` ports, and the
    /// flags that put the fleet there.
    fn run(scenario: fn(&Wiring)) {
        if require(Tool::Prometheus).is_none() {
            return;
        }
        let base = free_port_block(PROCESSES);
        let targets: Vec<String> = (base..base + PROCESSES)
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let prometheus =
            Prometheus::start(&targets, Duration::from_secs(1)).expect("prometheus starts");
        scenario(&Wiring {
            store: &prometheus,
            args: vec!["--metrics-port".into(), base.to_string()],
            env: vec![],
            // The orchestrator serves the first port of the block.
            from_orchestrator: Box::new(move |s| {
                s.labels.get("instance") == Some(&format!("127.0.0.1:{base}"))
            }),
        });
    }

    #[test]
    fn a_ten_second_fleet_is_counted_exactly_by_prometheus() {
        run(scenarios::ten_second_fleet_is_counted_exactly);
    }

    #[test]
    fn a_killed_server_drops_the_fleet_size_within_three_seconds() {
        run(scenarios::killed_server_drops_the_fleet_size);
    }
}

#[cfg(all(feature = "otel", not(feature = "prom")))]
mod otel {
    use gym_testkit::{require, Tool, VictoriaMetrics};

    use super::support::scenarios::{self, Wiring};

    /// A VictoriaMetrics receiving every process's OTLP/HTTP pushes twice a second.
    fn run(scenario: fn(&Wiring)) {
        if require(Tool::VictoriaMetrics).is_none() {
            return;
        }
        let vm = VictoriaMetrics::start().expect("victoria-metrics starts");
        scenario(&Wiring {
            store: &vm,
            args: vec![],
            env: vec![
                (
                    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                    vm.otlp_http_metrics_endpoint(),
                ),
                (
                    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
                    "http/protobuf".into(),
                ),
                ("OTEL_METRIC_EXPORT_INTERVAL", "500".into()),
                ("OTEL_SERVICE_NAME", "gym".into()),
            ],
            // OTEL_SERVICE_NAME above is the base of `<base>/<process>`.
            from_orchestrator: Box::new(|s| {
                s.labels.get("service_name").map(String::as_str) == Some("gym/orchestrator")
            }),
        });
    }

    #[test]
    fn a_ten_second_fleet_is_counted_exactly_by_victoria_metrics() {
        run(scenarios::ten_second_fleet_is_counted_exactly);
    }

    #[test]
    fn a_killed_server_drops_the_fleet_size_within_three_seconds() {
        run(scenarios::killed_server_drops_the_fleet_size);
    }
}
