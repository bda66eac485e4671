//! The `metrics` crate bridged into the OpenTelemetry pipeline, read back
//! from a real export (the console exporter's OTLP/JSON): kinds, labels,
//! descriptions and units, bucket rules, the cardinality limit's overflow
//! series, and names refused for meeting a gym family, another family, or
//! OpenTelemetry's name syntax. Each test uses its bridge as a local
//! recorder, so nothing here is installed process-wide (the logger aside).

use crate::support::counting_logger::CountingLogger;
use crate::support::otlp_json::u64_of;
use crate::support::SharedBuf;
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_kit::bridge::{HistogramMatcher, MetricsBridgeOptions, DEFAULT_HISTOGRAM_BOUNDS};
use gym_metrics_otel::{MetricsBridgeRecorder, MetricsBridgeStats, MetricsExporter, OtelBuilder};
use serde_json::Value;

/// A console pipeline with the bridge, its recorder, and what it writes.
struct Bridged {
    recorder: gym_metrics_otel::OtelRecorder,
    guard: gym_metrics_otel::OtelGuard,
    bridge: MetricsBridgeRecorder,
    out: SharedBuf,
}

fn bridged(options: MetricsBridgeOptions) -> Bridged {
    let out = SharedBuf::default();
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::server("math-0", "resources"))
        .exporter(MetricsExporter::Console)
        .console_writer(out.clone())
        .with_metrics_bridge(options)
        .build()
        .unwrap();
    let bridge = guard.metrics_recorder().unwrap();
    Bridged {
        recorder,
        guard,
        bridge,
        out,
    }
}

impl Bridged {
    /// Shuts down (the final export) and returns the last export written.
    fn export(self) -> Value {
        self.guard.shutdown().unwrap();
        let text = self.out.text();
        let last = text.lines().last().unwrap_or_else(|| panic!("no export"));
        serde_json::from_str(last).unwrap()
    }
}

/// The metrics of the scope called `scope`.
fn scope_metrics<'a>(doc: &'a Value, scope: &str) -> Vec<&'a Value> {
    doc["resourceMetrics"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|rm| rm["scopeMetrics"].as_array().unwrap())
        .filter(|sm| sm["scope"]["name"] == scope)
        .flat_map(|sm| sm["metrics"].as_array().unwrap())
        .collect()
}

/// The bridged metric called `name` (scope `metrics`), if exported.
fn bridged_metric<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    scope_metrics(doc, "metrics")
        .into_iter()
        .find(|m| m["name"] == name)
}

/// The data points of the bridged metric `name` of OTLP kind `kind`.
fn points<'a>(doc: &'a Value, name: &str, kind: &str) -> &'a Vec<Value> {
    let m = bridged_metric(doc, name).unwrap_or_else(|| panic!("{name} not exported: {doc}"));
    m[kind]["dataPoints"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} is not a {kind}: {m}"))
}

/// A data point's attributes as `key=value` strings, sorted.
fn attributes(point: &Value) -> Vec<String> {
    let mut out: Vec<String> = point["attributes"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|a| {
            let v = &a["value"];
            let value = v["stringValue"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v["boolValue"].to_string());
            format!("{}={value}", a["key"].as_str().unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The point of `points` whose attributes are exactly `want`.
fn point_with<'a>(points: &'a [Value], want: &[&str]) -> &'a Value {
    points
        .iter()
        .find(|p| attributes(p) == want)
        .unwrap_or_else(|| panic!("no point {want:?} among {points:?}"))
}

#[test]
fn counters_gauges_and_histograms_reach_the_export_beside_ours_with_labels_descriptions_and_units()
{
    if gym_testkit::ran_in_child() {
        return;
    }
    let b = bridged(MetricsBridgeOptions::new());
    b.recorder.record_verify_ms(40.0, true);
    metrics::with_local_recorder(&b.bridge, || {
        metrics::describe_counter!("sandbox.exec", "Sandbox commands run");
        metrics::describe_histogram!("model.call", metrics::Unit::Seconds, "Model call wall time");
        metrics::describe_gauge!("queue.depth", metrics::Unit::Bytes, "Bytes waiting");
        let exec = metrics::counter!("sandbox.exec", "provider" => "docker");
        exec.increment(2);
        exec.increment(3);
        let k8s = metrics::counter!("sandbox.exec", "provider" => "k8s");
        k8s.absolute(7);
        k8s.absolute(5); // older: a counter never goes down
        k8s.increment(1);
        let depth = metrics::gauge!("queue.depth");
        depth.set(4.5);
        depth.increment(2.0);
        depth.decrement(0.5);
        let call = metrics::histogram!("model.call", "model" => "m-1");
        call.record(0.004);
        call.record(30.0);
    });
    assert_eq!(b.bridge.stats(), MetricsBridgeStats::default());
    let doc = b.export();

    // Ours are exported as before, in their own scope.
    assert!(scope_metrics(&doc, gym_metrics_otel::SCOPE_NAME)
        .iter()
        .any(|m| m["name"] == "gym.verify.duration_ms"));
    // The same resource: one resourceMetrics for both scopes.
    assert_eq!(doc["resourceMetrics"].as_array().unwrap().len(), 1);

    let exec = bridged_metric(&doc, "sandbox.exec").unwrap();
    assert_eq!(exec["description"], "Sandbox commands run");
    assert_eq!(exec["sum"]["isMonotonic"], true);
    let exec = points(&doc, "sandbox.exec", "sum");
    assert_eq!(exec.len(), 2);
    assert_eq!(u64_of(&point_with(exec, &["provider=docker"])["asInt"]), 5);
    assert_eq!(u64_of(&point_with(exec, &["provider=k8s"])["asInt"]), 8);

    let depth = bridged_metric(&doc, "queue.depth").unwrap();
    assert_eq!(
        (depth["unit"].as_str(), depth["description"].as_str()),
        (Some("By"), Some("Bytes waiting"))
    );
    let depth = points(&doc, "queue.depth", "gauge");
    assert_eq!(point_with(depth, &[])["asDouble"], 6.0);

    let call = bridged_metric(&doc, "model.call").unwrap();
    assert_eq!(call["unit"], "s");
    assert_eq!(call["description"], "Model call wall time");
    let call = points(&doc, "model.call", "histogram");
    let point = point_with(call, &["model=m-1"]);
    assert_eq!(u64_of(&point["count"]), 2);
    assert_eq!(point["sum"], 30.004);
    let bounds: Vec<f64> = serde_json::from_value(point["explicitBounds"].clone()).unwrap();
    assert_eq!(bounds, DEFAULT_HISTOGRAM_BOUNDS, "the documented default");
    let counts: Vec<u64> = point["bucketCounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(u64_of)
        .collect();
    // 0.004 in (0, 5], 30 in (25, 50].
    let mut expected = vec![0u64; 16];
    expected[1] = 1;
    expected[4] = 1;
    assert_eq!(counts, expected);
}

#[test]
fn a_handle_registered_once_keeps_recording_into_its_series_from_any_thread() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let b = bridged(MetricsBridgeOptions::new());
    let counter = metrics::with_local_recorder(&b.bridge, || metrics::counter!("held", "k" => "v"));
    let gauge = metrics::with_local_recorder(&b.bridge, || metrics::gauge!("level", "k" => "v"));
    // Recorded outside any recorder scope: the handles hold their series.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    counter.increment(1);
                    gauge.increment(1.0);
                }
            });
        }
    });
    // Registering the same key again finds the same series.
    metrics::with_local_recorder(&b.bridge, || {
        metrics::counter!("held", "k" => "v").increment(1);
        metrics::gauge!("level", "k" => "v").decrement(0.5);
    });
    let doc = b.export();
    let held = points(&doc, "held", "sum");
    assert_eq!(held.len(), 1);
    assert_eq!(u64_of(&point_with(held, &["k=v"])["asInt"]), 4001);
    let level = points(&doc, "level", "gauge");
    assert_eq!(level.len(), 1);
    assert_eq!(point_with(level, &["k=v"])["asDouble"], 3999.5);
}

#[test]
fn histogram_boundaries_follow_the_first_matching_rule() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let options = MetricsBridgeOptions::new()
        .histogram_buckets(HistogramMatcher::Full("db.query".into()), vec![0.5])
        .unwrap()
        .histogram_buckets(
            HistogramMatcher::Prefix("db.".into()),
            vec![0.001, 0.01, 0.1],
        )
        .unwrap()
        .histogram_buckets(
            HistogramMatcher::Suffix(".bytes".into()),
            vec![1024.0, 1048576.0],
        )
        .unwrap();
    let b = bridged(options);
    metrics::with_local_recorder(&b.bridge, || {
        metrics::histogram!("db.query").record(0.2);
        metrics::histogram!("db.pool.wait").record(0.005);
        metrics::histogram!("http.body.bytes").record(2048.0);
        metrics::histogram!("other").record(1.0);
    });
    let doc = b.export();
    let bounds = |name: &str| -> Vec<f64> {
        let p = &points(&doc, name, "histogram")[0];
        serde_json::from_value(p["explicitBounds"].clone()).unwrap()
    };
    assert_eq!(bounds("db.query"), [0.5]);
    assert_eq!(bounds("db.pool.wait"), [0.001, 0.01, 0.1]);
    assert_eq!(bounds("http.body.bytes"), [1024.0, 1048576.0]);
    assert_eq!(bounds("other"), DEFAULT_HISTOGRAM_BOUNDS);
    let wait = &points(&doc, "db.pool.wait", "histogram")[0];
    let counts: Vec<u64> = wait["bucketCounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(u64_of)
        .collect();
    assert_eq!(counts, [0, 1, 0, 0]);
}

#[test]
fn label_sets_past_the_limit_share_the_overflow_series_counted_and_logged_once() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let logger = CountingLogger::install();
    let b = bridged(MetricsBridgeOptions::new().cardinality_limit(3));
    metrics::with_local_recorder(&b.bridge, || {
        // The empty label set does not count towards the limit.
        metrics::counter!("jobs.started").increment(100);
        for i in 0..5 {
            metrics::counter!("jobs.started", "job" => format!("j{i}")).increment(i + 1);
        }
        // A label set within the limit, registered again, is still its own.
        metrics::counter!("jobs.started", "job" => "j0").increment(10);
        for i in 0..4 {
            metrics::histogram!("jobs.wait", "job" => format!("j{i}")).record(1.0);
        }
    });
    // j3 and j4 of the counter (j4 twice counted: once), j3 of the histogram.
    assert_eq!(b.bridge.stats().overflowed, 3);
    assert_eq!(b.bridge.stats().refused, 0);
    // Registering an overflowed label set again still lands in the overflow series.
    metrics::with_local_recorder(&b.bridge, || {
        metrics::counter!("jobs.started", "job" => "j4").increment(1000);
    });
    assert_eq!(b.bridge.stats().overflowed, 4);
    let doc = b.export();

    let started = points(&doc, "jobs.started", "sum");
    assert_eq!(
        started.len(),
        5,
        "3 label sets, the empty one, the overflow: {started:?}"
    );
    assert_eq!(u64_of(&point_with(started, &[])["asInt"]), 100);
    assert_eq!(u64_of(&point_with(started, &["job=j0"])["asInt"]), 11);
    assert_eq!(u64_of(&point_with(started, &["job=j2"])["asInt"]), 3);
    let overflow = point_with(started, &["otel.metric.overflow=true"]);
    assert_eq!(u64_of(&overflow["asInt"]), 4 + 5 + 1000);
    let wait = points(&doc, "jobs.wait", "histogram");
    assert_eq!(wait.len(), 4);
    assert_eq!(
        u64_of(&point_with(wait, &["otel.metric.overflow=true"])["count"]),
        1
    );

    let warnings: Vec<String> = logger
        .lines(log::Level::Warn)
        .into_iter()
        .filter(|l| l.contains("cardinality limit"))
        .collect();
    assert_eq!(warnings.len(), 2, "once per instrument: {warnings:?}");
    assert!(
        warnings[0].contains("jobs_started_total") && warnings[0].contains("of 3 label sets"),
        "{warnings:?}"
    );
}

#[test]
fn a_limit_above_the_sdks_default_is_the_sdks_limit_too() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // The SDK's own default limit is 2000 series: the bridge's view raises
    // it, so 2100 label sets within our limit are 2100 series.
    let b = bridged(MetricsBridgeOptions::new().cardinality_limit(2100));
    metrics::with_local_recorder(&b.bridge, || {
        for i in 0..2100 {
            metrics::counter!("wide", "i" => i.to_string()).increment(1);
        }
    });
    assert_eq!(b.bridge.stats(), MetricsBridgeStats::default());
    let doc = b.export();
    let wide = points(&doc, "wide", "sum");
    assert_eq!(wide.len(), 2100);
    assert!(wide
        .iter()
        .all(|p| !attributes(p)[0].starts_with("otel.metric.overflow")));
}

#[test]
fn names_meeting_a_gym_family_another_family_or_no_opentelemetry_name_are_refused_and_logged_once()
{
    if gym_testkit::ran_in_child() {
        return;
    }
    let logger = CountingLogger::install();
    let b = bridged(MetricsBridgeOptions::new());
    metrics::with_local_recorder(&b.bridge, || {
        // A gym instrument's own name, and names of its Prometheus family.
        metrics::counter!("gym.verify.completed").increment(1);
        metrics::counter!("gym.verify.completed").increment(1); // the same name: counted once
        metrics::gauge!("gym_verify_completed_total").set(1.0);
        metrics::histogram!("gym.rollout.duration_ms_milliseconds").record(1.0);
        metrics::gauge!("target_info").set(1.0);
        // gym.servers.active is the orchestrator's; this is a server, refused all the same.
        metrics::gauge!("gym.servers.active").set(3.0);
        // Another family's: `jobs` as a counter is jobs_total, whose
        // OpenMetrics name `jobs` a gauge would meet.
        metrics::counter!("jobs").increment(1);
        metrics::gauge!("jobs").set(2.0);
        // No OpenTelemetry instrument name.
        metrics::counter!("9lives").increment(1);
        metrics::counter!("héllo").increment(1);
    });
    assert_eq!(b.bridge.stats().refused, 8);
    let doc = b.export();
    let exported: Vec<&str> = scope_metrics(&doc, "metrics")
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(exported, ["jobs"], "only the first `jobs`");
    assert!(bridged_metric(&doc, "jobs").unwrap()["sum"].is_object());
    // Our own are unaffected.
    assert!(scope_metrics(&doc, gym_metrics_otel::SCOPE_NAME)
        .iter()
        .any(|m| m["name"] == "gym.verify.completed"));

    let refusals: Vec<String> = logger
        .lines(log::Level::Warn)
        .into_iter()
        .filter(|l| l.contains("is not exported"))
        .collect();
    assert_eq!(refusals.len(), 8, "{refusals:?}");
    assert!(
        refusals[0].contains("\"gym.verify.completed\"")
            && refusals[0].contains("gym_verify_completed_total"),
        "{refusals:?}"
    );
    assert!(
        refusals
            .iter()
            .any(|l| l.contains("\"9lives\"") && l.contains("starts with an ASCII letter")),
        "{refusals:?}"
    );
}

#[test]
fn a_description_after_the_first_use_changes_nothing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let b = bridged(MetricsBridgeOptions::new());
    metrics::with_local_recorder(&b.bridge, || {
        metrics::histogram!("late").record(1.0);
        metrics::describe_histogram!("late", metrics::Unit::Seconds, "Too late");
        metrics::histogram!("late").record(2.0);
    });
    let doc = b.export();
    let late = bridged_metric(&doc, "late").unwrap();
    assert_eq!(late["unit"].as_str().unwrap_or(""), "");
    assert_eq!(late["description"].as_str().unwrap_or(""), "");
    assert_eq!(u64_of(&points(&doc, "late", "histogram")[0]["count"]), 2);
}
