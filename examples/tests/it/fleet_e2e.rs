//! End to end: the real `gym-fleet` binary, 3 servers and 1 agent, scraped by a
//! real Prometheus (`prom`) or pushing OTLP to a real VictoriaMetrics (`otel`),
//! with the same scenarios (`support/scenarios.rs`).
#![cfg(not(feature = "noop"))]

#[cfg(feature = "prom")]
mod prom {
    use std::time::Duration;

    use gym_testkit::{free_port_block, require, Prometheus, Tool};

    use crate::support::scenarios::{self, Wiring};

    const PROCESSES: u16 = 5; // orchestrator, 3 servers, 1 agent

    /// A Prometheus scraping every second the fleet's `/metrics` ports, and the
    /// flags that put the fleet there.
    fn run(scenario: fn(&Wiring)) {
        require(Tool::Prometheus);
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
        if gym_testkit::ran_in_child() {
            return;
        }
        run(scenarios::ten_second_fleet_is_counted_exactly);
    }

    #[test]
    fn a_killed_server_drops_the_fleet_size_within_three_seconds() {
        if gym_testkit::ran_in_child() {
            return;
        }
        run(scenarios::killed_server_drops_the_fleet_size);
    }
}

#[cfg(all(feature = "otel", not(feature = "prom")))]
mod otel {
    use gym_testkit::{require, Tool, VictoriaMetrics};

    use crate::support::scenarios::{self, Wiring};

    /// A VictoriaMetrics receiving every process's OTLP/HTTP pushes twice a second.
    fn run(scenario: fn(&Wiring)) {
        require(Tool::VictoriaMetrics);
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
        if gym_testkit::ran_in_child() {
            return;
        }
        run(scenarios::ten_second_fleet_is_counted_exactly);
    }

    #[test]
    fn a_killed_server_drops_the_fleet_size_within_three_seconds() {
        if gym_testkit::ran_in_child() {
            return;
        }
        run(scenarios::killed_server_drops_the_fleet_size);
    }
}

/// The live view as a person sees it: the demo in a real 80- and 132-column
/// terminal, its screen read back by a terminal emulator.
#[cfg(feature = "prom")]
mod live_view {
    use std::process::Command;
    use std::time::Duration;

    use gym_testkit::{free_port_block, Terminal};

    /// Runs `gym-fleet --duration 6` in a `columns` × 24 terminal, reading
    /// the screen while the table is live, then once it has exited.
    fn screens(columns: u16) -> (Vec<String>, Vec<String>) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gym-fleet"));
        let base = free_port_block(5);
        command.args(["--duration", "6", "--metrics-port", &base.to_string()]);
        let mut terminal = Terminal::start(command, columns, 24).unwrap();
        std::thread::sleep(Duration::from_secs(5));
        let live = terminal.screen();
        terminal.wait(Duration::from_secs(30));
        (live, terminal.screen())
    }

    /// The note under the table, which a narrow terminal breaks into lines.
    const NOTE: &str = "rate, total, success and p50/p95 read back from each process's own \
        /metrics; an agent's success (*) is its own tally: no gym instrument carries it";

    /// One progress line, one column header, every row fitted to the width
    /// and the note whole below it: a wrapped row would leave a fragment on
    /// a line of its own, a stale frame a second progress line.
    fn assert_one_clean_table(screen: &[String], columns: u16) {
        let text = screen.join("\n");
        let progress = screen
            .iter()
            .filter(|l| l.contains(" s / 6 s  gym-fleet |"));
        assert_eq!(progress.count(), 1, "one progress line expected:\n{text}");
        let headers = screen.iter().filter(|l| l.starts_with("process "));
        assert_eq!(headers.count(), 1, "one column header expected:\n{text}");
        let mut table = screen
            .iter()
            .skip_while(|l| !l.starts_with("process "))
            .take_while(|l| !l.is_empty());
        let rows = [
            "process ",
            "orchestrator ",
            "resources-",
            "agent-0 ",
            "agents ",
            "servers ",
        ];
        let mut note = Vec::new();
        for line in table.by_ref() {
            assert!(
                line.chars().count() < usize::from(columns),
                "{line:?}:\n{text}"
            );
            if line.starts_with("rate,") || !note.is_empty() {
                note.push(line.as_str());
            } else {
                assert!(
                    rows.iter().any(|r| line.starts_with(r)),
                    "a fragment {line:?}:\n{text}"
                );
            }
        }
        assert_eq!(note.join(" "), NOTE, "the note, whole:\n{text}");
    }

    #[test]
    fn the_demo_redraws_one_table_in_place_at_80_and_132_columns() {
        if gym_testkit::ran_in_child() {
            return;
        }
        for columns in [80, 132] {
            let (live, done) = screens(columns);
            assert_one_clean_table(&live, columns);
            assert!(
                done.iter().any(|l| l.starts_with("fleet: rollouts=")),
                "the summary follows the table:\n{}",
                done.join("\n")
            );
        }
    }
}
