//! e2e: `install` with the `metrics` crate bridged takes the process's
//! `metrics` recorder; real Prometheus scrapes the bridged series beside
//! ours, in OpenMetrics and in the 0.0.4 text (the scrape fails whole on a
//! text it refuses), and an overflow is logged once. (Global state: its own
//! test binary.)

use std::sync::Mutex;
use std::time::Duration;

use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{require, Prometheus, Tool};

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct WarningsLogger;

impl log::Log for WarningsLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            WARNINGS.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

#[test]
fn prometheus_scrapes_the_bridged_series_in_both_formats() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    log::set_logger(&WarningsLogger).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .with_metrics_bridge(MetricsBridgeOptions::new().cardinality_limit(2))
        .install()
        .unwrap();
    gym_metrics_api::record_verify(Duration::from_millis(250), true);
    metrics::describe_counter!("verify.outcome", "Verifications by outcome");
    for reason in ["ok", "wrong_answer", "timeout", "crash"] {
        metrics::counter!("verify.outcome", "reason" => reason).increment(1);
    }
    metrics::describe_histogram!("sandbox.start", metrics::Unit::Seconds, "Sandbox start-up");
    metrics::histogram!("sandbox.start", "provider" => "docker", "1st" => "x", "a:b" => "\"q\"")
        .record(0.7);
    // Refused: it would meet a gym family.
    metrics::counter!("gym.verify.completed").increment(100);

    for protocol in ["OpenMetricsText1.0.0", "PrometheusText0.0.4"] {
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  scrape_protocols: [{protocol}]\n\
             scrape_configs:\n  - job_name: gym\n    static_configs:\n      - targets: ['{}']\n",
            guard.local_addr()
        );
        let prometheus = Prometheus::start_with_config(&config).unwrap();
        let outcome = prometheus
            .wait_for("verify_outcome_total", Duration::from_secs(15), |s| {
                s.len() == 3
            })
            .unwrap_or_else(|e| panic!("{protocol}: {e}\n{}", prometheus.log_tail()));
        let mut by_series: Vec<(String, f64)> = outcome
            .iter()
            .map(|s| {
                let key = s
                    .labels
                    .get("reason")
                    .map(|r| format!("reason={r}"))
                    .or_else(|| {
                        s.labels
                            .get("otel_metric_overflow")
                            .map(|o| format!("overflow={o}"))
                    })
                    .unwrap_or_default();
                assert_eq!(s.labels["otel_scope_name"], "metrics", "{protocol}");
                (key, s.value)
            })
            .collect();
        by_series.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            by_series,
            [
                ("overflow=true".to_string(), 2.0),
                ("reason=ok".to_string(), 1.0),
                ("reason=wrong_answer".to_string(), 1.0),
            ],
            "{protocol}"
        );
        let start = prometheus.query("sandbox_start_seconds_count").unwrap();
        assert_eq!(start.len(), 1, "{protocol}: {start:?}");
        assert_eq!(start[0].labels["provider"], "docker");
        assert_eq!(start[0].labels["key_1st"], "x");
        assert_eq!(start[0].labels["a_b"], "\"q\"");
        let completed = prometheus.query("gym_verify_completed_total").unwrap();
        assert_eq!(completed.len(), 1, "{protocol}");
        assert_eq!(
            completed[0].value, 1.0,
            "{protocol}: the refused counter stayed out"
        );
    }
    let warnings = WARNINGS.lock().unwrap();
    let overflow = warnings
        .iter()
        .filter(|w| w.contains("cardinality limit"))
        .count();
    let refused = warnings
        .iter()
        .filter(|w| w.contains("gym.verify.completed"))
        .count();
    assert_eq!((overflow, refused), (1, 1), "{warnings:?}");
    drop(warnings);
    guard.shutdown().expect("the endpoint stops cleanly");
}
