//! The `metrics` bridge over OTLP http/protobuf into VictoriaMetrics
//! (Prometheus naming), beside the Prometheus backend's bridge given the
//! same instruments: the series names, label sets and values
//! VictoriaMetrics derives are the ones the Prometheus path writes (e.g. a
//! counter `jobs.done` with `queue=fast` is `jobs_done_total{queue="fast"}`
//! on both, and a label set past the cardinality limit lands in the series
//! `otel_metric_overflow="true"` on both).
#![cfg(feature = "http-proto")]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
use gym_metrics_otel::OtelBuilder;
use gym_testkit::{require, Sample, Tool, VictoriaMetrics};

/// A series: its name and its labels (scope and resource labels left out).
type Series = (String, BTreeMap<String, String>);

const SERVICE: &str = "e2e-facade/math-0";

/// One label set per instrument, so `retries`' second one overflows.
fn options() -> MetricsBridgeOptions {
    MetricsBridgeOptions::new()
        .cardinality_limit(1)
        .histogram_buckets(
            HistogramMatcher::Prefix("sandbox.".into()),
            vec![0.1, 1.0, 10.0],
        )
        .unwrap()
}

/// The same `metrics` calls, through whichever recorder is local.
fn record_instruments() {
    metrics::describe_histogram!("sandbox.start", metrics::Unit::Seconds, "Sandbox start-up");
    metrics::describe_counter!("net.sent", metrics::Unit::Bytes, "Bytes sent");
    metrics::counter!("jobs.done", "queue" => "fast").increment(3);
    metrics::gauge!("queue.depth", "pool" => "a").set(4.5);
    metrics::histogram!("sandbox.start", "provider" => "docker").record(0.8);
    metrics::counter!("net.sent", "peer" => "x").increment(100);
    metrics::counter!("retries", "peer" => "a").increment(1);
    metrics::counter!("retries", "peer" => "b").increment(2);
}

/// The bridged series of the Prometheus backend's exposition (what follows
/// `target_info`), without `otel_scope_name`.
fn prometheus_series() -> BTreeMap<Series, f64> {
    let (_recorder, handle) = gym_metrics_prom::PrometheusBuilder::new()
        .role(Role::server("math-0", "resources"))
        .with_metrics_bridge(options())
        .build()
        .unwrap();
    let bridge = handle.metrics_recorder().unwrap();
    metrics::with_local_recorder(&bridge, record_instruments);
    let text = handle.render();
    let after = &text[text.find("\ntarget_info{").unwrap() + 1..];
    after
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('#'))
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let (name, labels) = series.split_once('{').unwrap();
            let labels = labels
                .trim_end_matches('}')
                .split("\",")
                .map(|kv| {
                    let (k, v) = kv.split_once("=\"").unwrap();
                    (k.to_string(), v.trim_end_matches('"').to_string())
                })
                .filter(|(k, _)| k != "otel_scope_name")
                .collect();
            ((name.to_string(), labels), value.parse().unwrap())
        })
        .collect()
}

fn without(sample: &Sample, keys: &BTreeSet<String>) -> Series {
    let labels = sample
        .labels
        .iter()
        .filter(|(k, _)| *k != "__name__" && !keys.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (sample.labels["__name__"].clone(), labels)
}

#[test]
fn bridged_series_in_victoria_metrics_are_named_as_the_prometheus_bridge_names_them() {
    require(Tool::VictoriaMetrics);
    let expected = prometheus_series();
    assert!(
        expected.contains_key(&(
            "jobs_done_total".to_string(),
            BTreeMap::from([("queue".to_string(), "fast".to_string())])
        )),
        "{expected:?}"
    );
    assert!(
        expected.contains_key(&(
            "retries_total".to_string(),
            BTreeMap::from([("otel_metric_overflow".to_string(), "true".to_string())])
        )),
        "{expected:?}"
    );

    let vm = VictoriaMetrics::start().unwrap();
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::server("math-0", "resources"))
        .service_name("e2e-facade")
        .endpoint(vm.otlp_http_metrics_endpoint())
        .export_interval(Duration::from_millis(300))
        .with_metrics_bridge(options())
        .build()
        .unwrap();
    recorder.record_verify_ms(40.0, true);
    let bridge = guard.metrics_recorder().unwrap();
    metrics::with_local_recorder(&bridge, record_instruments);
    guard.shutdown().unwrap();

    // The labels every series of this process carries (resource, scope):
    // those of a gym series.
    let ours = vm
        .wait_for(
            &format!("gym_verify_completed_total{{service_name=\"{SERVICE}\"}}"),
            Duration::from_secs(10),
            |s| s.len() == 1,
        )
        .unwrap();
    let common: BTreeSet<String> = ours[0].labels.keys().cloned().collect();
    let promql = format!("{{service_name=\"{SERVICE}\",__name__!~\"gym_.*|http_.*|target_info\"}}");
    let samples = vm
        .wait_for(&promql, Duration::from_secs(10), |s| {
            s.len() >= expected.len()
        })
        .unwrap_or_else(|e| panic!("{e}\nexpected {expected:#?}"));
    let got: BTreeMap<Series, f64> = samples
        .iter()
        .map(|s| (without(s, &common), s.value))
        .collect();
    assert_eq!(got, expected);
}
