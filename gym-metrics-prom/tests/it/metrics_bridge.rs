//! The `metrics` crate bridged into the exposition: kinds, labels, HELP and
//! units, bucket rules, the cardinality limit's overflow series, names
//! refused for meeting a gym family or another family, and `promtool check
//! metrics` finding nothing in what the bridge adds.

use std::collections::BTreeSet;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions};
use gym_metrics_prom::{
    MetricsBridgeRecorder, MetricsBridgeStats, PrometheusBuilder, PrometheusHandle,
};
use gym_testkit::{promtool_check_metrics, require, Tool};

fn bridged(
    options: MetricsBridgeOptions,
) -> (
    gym_metrics_prom::PrometheusRecorder,
    PrometheusHandle,
    MetricsBridgeRecorder,
) {
    let (recorder, handle) = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_metrics_bridge(options)
        .build()
        .unwrap();
    let bridge = handle.metrics_recorder().unwrap();
    (recorder, handle, bridge)
}

/// The text after the gym families (which end with `target_info`).
fn bridged_text(handle: &PrometheusHandle) -> String {
    let text = handle.render();
    let at = text.find("\ntarget_info{").unwrap() + 1;
    let end = at + text[at..].find('\n').unwrap() + 1;
    text[end..].to_string()
}

#[test]
fn counters_gauges_and_histograms_with_labels_help_and_units_after_ours() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (recorder, handle, bridge) = bridged(MetricsBridgeOptions::new());
    recorder.record_verify_ms(40.0, true);
    metrics::with_local_recorder(&bridge, || {
        metrics::describe_counter!("sandbox.exec", "Sandbox commands run");
        metrics::describe_histogram!("model.call", metrics::Unit::Seconds, "Model call wall time");
        metrics::describe_gauge!("queue.depth", "Rollouts waiting");
        let exec = metrics::counter!("sandbox.exec", "provider" => "docker");
        exec.increment(2);
        exec.increment(3);
        metrics::counter!("sandbox.exec", "provider" => "k8s").absolute(7);
        metrics::gauge!("queue.depth").set(4.5);
        let call = metrics::histogram!("model.call", "model" => "m-1");
        call.record(0.004);
        call.record(30.0);
    });
    let expected = "\
# HELP model_call_seconds Model call wall time
# TYPE model_call_seconds histogram
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"0\"} 0
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"5\"} 1
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"10\"} 1
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"25\"} 1
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"50\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"75\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"100\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"250\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"500\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"750\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"1000\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"2500\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"5000\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"7500\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"10000\"} 2
model_call_seconds_bucket{model=\"m-1\",otel_scope_name=\"metrics\",le=\"+Inf\"} 2
model_call_seconds_sum{model=\"m-1\",otel_scope_name=\"metrics\"} 30.004
model_call_seconds_count{model=\"m-1\",otel_scope_name=\"metrics\"} 2
# HELP queue_depth Rollouts waiting
# TYPE queue_depth gauge
queue_depth{otel_scope_name=\"metrics\"} 4.5
# HELP sandbox_exec_total Sandbox commands run
# TYPE sandbox_exec_total counter
sandbox_exec_total{provider=\"docker\",otel_scope_name=\"metrics\"} 5
sandbox_exec_total{provider=\"k8s\",otel_scope_name=\"metrics\"} 7
";
    assert_eq!(bridged_text(&handle), expected);
    // Ours are still all there, before.
    let text = handle.render();
    assert!(
        text.starts_with("# HELP gym_servers_active")
            || text.contains("gym_verify_completed_total{")
    );
    assert!(text.find("target_info").unwrap() < text.find("model_call_seconds").unwrap());
    assert_eq!(bridge.stats(), MetricsBridgeStats::default());
}

#[test]
fn a_handle_registered_once_keeps_recording_into_its_series() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_r, handle, bridge) = bridged(MetricsBridgeOptions::new());
    let counter = metrics::with_local_recorder(&bridge, || metrics::counter!("held", "k" => "v"));
    // Recorded outside any recorder scope: the handle holds its series.
    for _ in 0..1000 {
        counter.increment(1);
    }
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| (0..1000).for_each(|_| counter.increment(1)));
        }
    });
    // Registering the same key again finds the same series.
    metrics::with_local_recorder(&bridge, || {
        metrics::counter!("held", "k" => "v").increment(1)
    });
    assert!(
        bridged_text(&handle).contains("held_total{k=\"v\",otel_scope_name=\"metrics\"} 5001\n"),
        "{}",
        bridged_text(&handle)
    );
}

#[test]
fn bucket_rules_by_name_then_prefix_else_the_default() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let options = MetricsBridgeOptions::new()
        .histogram_buckets(HistogramMatcher::Full("db.query".into()), vec![0.01, 0.1])
        .unwrap()
        .histogram_buckets(HistogramMatcher::Prefix("db.".into()), vec![1.0])
        .unwrap();
    let (_r, handle, bridge) = bridged(options);
    metrics::with_local_recorder(&bridge, || {
        metrics::histogram!("db.query").record(0.05);
        metrics::histogram!("db.pool.wait").record(0.5);
        metrics::histogram!("other").record(6.0);
    });
    let text = bridged_text(&handle);
    let les = |family: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{family}_bucket{{")))
            .map(|l| {
                l.split("le=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(les("db_query"), ["0.01", "0.1", "+Inf"]);
    assert_eq!(les("db_pool_wait"), ["1", "+Inf"]);
    assert_eq!(les("other").len(), 16);
    assert!(
        text.contains("db_query_bucket{otel_scope_name=\"metrics\",le=\"0.01\"} 0\n"),
        "{text}"
    );
    assert!(
        text.contains("db_query_bucket{otel_scope_name=\"metrics\",le=\"0.1\"} 1\n"),
        "{text}"
    );
}

#[test]
fn label_sets_past_the_limit_share_one_overflow_series() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_r, handle, bridge) = bridged(MetricsBridgeOptions::new().cardinality_limit(3));
    metrics::with_local_recorder(&bridge, || {
        for user in 0..10 {
            metrics::counter!("logins", "user" => user.to_string()).increment(1);
        }
        // Without labels: not counted towards the limit (as the SDK).
        metrics::counter!("logins").increment(100);
        // A label set admitted before the limit is still its own series.
        metrics::counter!("logins", "user" => "1").increment(10);
    });
    let text = bridged_text(&handle);
    let series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("logins_total{"))
        .collect();
    assert_eq!(
        series,
        [
            "logins_total{otel_scope_name=\"metrics\"} 100",
            "logins_total{user=\"0\",otel_scope_name=\"metrics\"} 1",
            "logins_total{user=\"1\",otel_scope_name=\"metrics\"} 11",
            "logins_total{user=\"2\",otel_scope_name=\"metrics\"} 1",
            "logins_total{otel_metric_overflow=\"true\",otel_scope_name=\"metrics\"} 7",
        ]
    );
    assert_eq!(bridge.stats().overflowed, 7);
}

#[test]
fn the_default_limit_is_two_thousand_label_sets() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (_r, handle, bridge) = bridged(MetricsBridgeOptions::new());
    metrics::with_local_recorder(&bridge, || {
        for id in 0..2001 {
            metrics::gauge!("conns", "id" => id.to_string()).set(1.0);
        }
    });
    let text = bridged_text(&handle);
    let series = text.lines().filter(|l| l.starts_with("conns{")).count();
    assert_eq!(series, 2001); // 2000 label sets and the overflow series
    assert!(text.contains("conns{otel_metric_overflow=\"true\",otel_scope_name=\"metrics\"} 1\n"));
    assert_eq!(bridge.stats().overflowed, 1);
}

#[test]
fn names_that_would_meet_a_gym_family_or_another_type_are_refused() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (recorder, handle, bridge) = bridged(MetricsBridgeOptions::new());
    recorder.record_rollout_duration_ms(10.0);
    recorder.record_active_servers(3);
    let before = handle.render();
    metrics::with_local_recorder(&bridge, || {
        metrics::counter!("gym.verify.completed").increment(1); // gym_verify_completed_total
        metrics::gauge!("target_info").set(2.0);
        metrics::gauge!("gym_servers_active").set(9.0);
        metrics::describe_histogram!("gym.rollout.duration_ms", metrics::Unit::Milliseconds, "x");
        metrics::histogram!("gym.rollout.duration_ms").record(1.0);
        metrics::gauge!("gym_rollout_duration_ms_milliseconds_count").set(1.0);
        metrics::gauge!("gym_verify_completed").set(1.0); // its OpenMetrics family name
                                                          // Among bridged families: the first type wins.
        metrics::gauge!("jobs").set(1.0);
        metrics::counter!("jobs_total").increment(1); // would be a counter family `jobs` in OpenMetrics
        metrics::histogram!("lat").record(1.0);
        metrics::gauge!("lat_sum").set(1.0);
        metrics::counter!("").increment(1);
    });
    // Same name, same kind: one family (as Prometheus would see it).
    metrics::with_local_recorder(&bridge, || {
        metrics::counter!("a.b").increment(1);
        metrics::counter!("a_b").increment(2);
    });
    assert_eq!(bridge.stats().refused, 9);
    let text = handle.render();
    assert!(text.starts_with(&before[..before.find("# HELP target_info").unwrap()]));
    assert_eq!(
        bridged_text(&handle),
        "# TYPE a_b_total counter\na_b_total{otel_scope_name=\"metrics\"} 3\n\
         # TYPE jobs gauge\njobs{otel_scope_name=\"metrics\"} 1\n\
         # TYPE lat histogram\n"
            .to_string()
            + &lat_lines()
    );
}

fn lat_lines() -> String {
    let mut out = String::new();
    for le in [
        "0", "5", "10", "25", "50", "75", "100", "250", "500", "750", "1000", "2500", "5000",
        "7500", "10000", "+Inf",
    ] {
        let n = if le == "0" { 0 } else { 1 };
        out.push_str(&format!(
            "lat_bucket{{otel_scope_name=\"metrics\",le=\"{le}\"}} {n}\n"
        ));
    }
    out.push_str(
        "lat_sum{otel_scope_name=\"metrics\"} 1\nlat_count{otel_scope_name=\"metrics\"} 1\n",
    );
    out
}

#[test]
fn hostile_names_and_labels_become_an_exposition_promtool_accepts() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Promtool);
    let (recorder, handle, bridge) = bridged(MetricsBridgeOptions::new());
    recorder.record_rollout_duration_ms(120.0);
    recorder.record_verify_ms(40.0, true);
    recorder.record_active_servers(4);
    let gym_only = promtool_check_metrics(&handle.render()).unwrap();
    metrics::with_local_recorder(&bridge, || {
        metrics::describe_counter!(
            "http.client.retries",
            "Retries \"quoted\"\nand a \\ newline"
        );
        metrics::counter!("http.client.retries", "peer.host" => "a\"b\\c\nd", "1st" => "x", "__name__" => "y", "otel_scope_name" => "z", "a:b" => "c").increment(1);
        metrics::histogram!("élan-vital/ms", "le" => "1", "http.method" => "GET", "http_method" => "POST").record(3.0);
        metrics::gauge!("9.lives", "" => "empty key").set(f64::NAN);
        metrics::gauge!("inf").set(f64::INFINITY);
        metrics::describe_gauge!("memory.used", metrics::Unit::Mebibytes, "Memory in use");
        metrics::gauge!("memory.used").set(12.0);
        metrics::describe_counter!("net.rx", metrics::Unit::BitsPerSecond, "");
        metrics::counter!("net.rx").increment(1);
    });
    let text = handle.render();
    // `__name__` by the crate's one label rule (runs of `_` collapse): `_name_`.
    assert!(text.contains("http_client_retries_total{_name_=\"y\",a_b=\"c\",key_1st=\"x\",key_otel_scope_name=\"z\",peer_host=\"a\\\"b\\\\c\\nd\",otel_scope_name=\"metrics\"} 1\n"), "{text}");
    assert!(text.contains("_lan_vital_ms_bucket{http_method=\"GET;POST\",key_le=\"1\",otel_scope_name=\"metrics\",le=\"5\"} 1\n"), "{text}");
    assert!(
        text.contains("_9_lives{key_=\"empty key\",otel_scope_name=\"metrics\"} NaN\n"),
        "{text}"
    );
    assert!(
        text.contains("memory_used_mebibytes{otel_scope_name=\"metrics\"} 12\n"),
        "{text}"
    );
    assert!(
        text.contains("net_rx_per_second_total{otel_scope_name=\"metrics\"} 1\n"),
        "{text}"
    );
    // Lint findings only (a text promtool cannot parse is one finding, an
    // error): a family without a description has no HELP, as in
    // OpenTelemetry's exporter, and `ms` in a name is an abbreviated unit.
    let findings: BTreeSet<String> = promtool_check_metrics(&text).unwrap().into_iter().collect();
    let mut expected: BTreeSet<String> = gym_only.into_iter().collect();
    for bare in [
        "_9_lives",
        "_lan_vital_ms",
        "inf",
        "net_rx_per_second_total",
    ] {
        expected.insert(format!("{bare} no help text"));
    }
    expected.insert("_lan_vital_ms metric names should not contain abbreviated units".into());
    assert_eq!(findings, expected, "{text}");
}

#[test]
fn with_process_metrics_the_process_family_names_are_ours_too() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let bridged_process = |process: bool| {
        let builder = PrometheusBuilder::new().with_metrics_bridge(MetricsBridgeOptions::new());
        let builder = if process {
            builder.with_process_metrics()
        } else {
            builder
        };
        let (_recorder, handle) = builder.build().unwrap();
        let bridge = handle.metrics_recorder().unwrap();
        metrics::with_local_recorder(&bridge, || {
            metrics::gauge!("process.open_fds").set(1.0);
            metrics::counter!("process.cpu.seconds").increment(1); // process_cpu_seconds_total
        });
        (bridge.stats().refused, bridged_text(&handle))
    };
    let (refused, text) = bridged_process(false);
    assert_eq!(refused, 0, "{text}");
    assert!(
        text.contains("\nprocess_open_fds{otel_scope_name=\"metrics\"} 1\n"),
        "{text}"
    );
    if cfg!(target_os = "linux") {
        let (refused, text) = bridged_process(true);
        assert_eq!(refused, 2, "{text}");
        assert!(text.is_empty(), "{text}");
    }
}
