//! `with_registry`: an application's own `prometheus::Registry` in our
//! exposition, after the gym families (and the bridge's), written by our one
//! writer in both formats; clashes refused at build and skipped at scrape;
//! `promtool check metrics` finds nothing in what it adds.

use crate::common::exposition::parse;
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_kit::bridge::MetricsBridgeOptions;
use gym_metrics_prom::{BuildError, PrometheusBuilder, PrometheusHandle};
use gym_testkit::{promtool_check_metrics, require, Tool};
use prometheus::{
    Encoder, Gauge, Histogram, HistogramOpts, IntCounter, IntCounterVec, Opts, Registry,
    TextEncoder,
};

struct App {
    registry: Registry,
    jobs: IntCounterVec,
    depth: Gauge,
    wait: Histogram,
}

fn app() -> App {
    let registry = Registry::new();
    let jobs = IntCounterVec::new(
        Opts::new("sandbox_jobs_total", "Sandbox jobs run, by \"provider\".")
            .const_label("pool", "a\\b"),
        &["provider"],
    )
    .unwrap();
    let depth = Gauge::new("queue_depth", "Rollouts waiting.").unwrap();
    let wait = Histogram::with_opts(
        HistogramOpts::new("queue_wait_seconds", "Time in the queue.").buckets(vec![0.1, 1.0]),
    )
    .unwrap();
    registry.register(Box::new(jobs.clone())).unwrap();
    registry.register(Box::new(depth.clone())).unwrap();
    registry.register(Box::new(wait.clone())).unwrap();
    App {
        registry,
        jobs,
        depth,
        wait,
    }
}

fn record(app: &App) {
    app.jobs.with_label_values(&["docker"]).inc_by(3);
    app.jobs.with_label_values(&["k8s\n"]).inc();
    app.depth.set(4.5);
    app.wait.observe(0.05);
    app.wait.observe(7.0);
}

/// What `TextEncoder` writes for the registry alone.
fn encoded(registry: &Registry) -> String {
    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// The text after the gym families (which end with `target_info`).
fn after_ours(text: &str) -> &str {
    let at = text.find("\ntarget_info{").unwrap() + 1;
    &text[at + text[at..].find('\n').unwrap() + 1..]
}

fn built(app: &App) -> PrometheusHandle {
    let (recorder, handle) = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_registry(app.registry.clone())
        .build()
        .unwrap();
    recorder.record_verify_ms(40.0, true);
    handle
}

#[test]
fn the_registrys_families_follow_ours_exactly_as_its_own_encoder_writes_them() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let app = app();
    let handle = built(&app);
    record(&app);
    let text = handle.render();
    // Byte for byte the registry's own text encoding, after target_info.
    assert_eq!(after_ours(&text), encoded(&app.registry), "{text}");
    assert!(after_ours(&text).starts_with("# HELP queue_depth Rollouts waiting.\n"));
    // Values recorded after build show: gathered at each scrape.
    app.depth.set(6.0);
    let families = parse(&handle.render());
    let depth = &families["queue_depth"];
    assert_eq!(depth.samples.values().copied().collect::<Vec<_>>(), [6.0]);
    assert_eq!(families["sandbox_jobs_total"].kind, "counter");
    assert_eq!(families["queue_wait_seconds"].kind, "histogram");
}

#[test]
fn openmetrics_frames_the_registrys_families_as_it_frames_ours() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let app = app();
    let handle = built(&app);
    record(&app);
    let om = handle.render_openmetrics();
    assert!(om.contains("# HELP sandbox_jobs Sandbox jobs run, by \\\"provider\\\".\n# TYPE sandbox_jobs counter\n"), "{om}");
    assert!(
        om.contains("sandbox_jobs_total{pool=\"a\\\\b\",provider=\"docker\"} 3\n"),
        "{om}"
    );
    assert!(om.contains("queue_wait_seconds_bucket{le=\"+Inf\"} 2\nqueue_wait_seconds_sum 7.05\nqueue_wait_seconds_count 2\n"), "{om}");
    assert!(om.ends_with("provider=\"k8s\\n\"} 1\n# EOF\n"), "{om}");
}

#[test]
fn a_counter_named_without_total_gets_it_in_openmetrics_only() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let registry = Registry::new();
    let c = IntCounter::new("restarts", "Restarts.").unwrap();
    registry.register(Box::new(c.clone())).unwrap();
    c.inc();
    let (_r, handle) = PrometheusBuilder::new()
        .with_registry(registry)
        .build()
        .unwrap();
    assert!(handle
        .render()
        .ends_with("# TYPE restarts counter\nrestarts 1\n"));
    assert!(handle
        .render_openmetrics()
        .ends_with("# TYPE restarts counter\nrestarts_total 1\n# EOF\n"));
}

#[test]
fn a_family_meeting_ours_is_refused_at_build_naming_both() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for (name, ours) in [
        ("target_info", "target_info"),
        ("gym_verify_completed", "gym_verify_completed_total"),
        (
            "gym_rollout_duration_ms_milliseconds_count",
            "gym_rollout_duration_ms_milliseconds",
        ),
    ] {
        let registry = Registry::new();
        registry
            .register(Box::new(Gauge::new(name, "mine").unwrap()))
            .unwrap();
        let e = PrometheusBuilder::new()
            .with_registry(registry)
            .build()
            .unwrap_err();
        match &e {
            BuildError::RegistryClash {
                family,
                ours: owner,
            } => {
                assert_eq!((family.as_str(), owner.as_str()), (name, ours));
            }
            other => panic!("{other}"),
        }
        assert!(e.to_string().contains("rename it"), "{e}");
    }
    // The process families are ours only when asked for.
    if cfg!(target_os = "linux") {
        let registry = Registry::new();
        let fds = Gauge::new("process_open_fds", "mine").unwrap();
        registry.register(Box::new(fds)).unwrap();
        assert!(PrometheusBuilder::new()
            .with_registry(registry.clone())
            .build()
            .is_ok());
        let e = PrometheusBuilder::new()
            .with_process_metrics()
            .with_registry(registry)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("process_open_fds"), "{e}");
    }
}

#[test]
fn a_clashing_family_registered_later_is_left_out_of_every_scrape() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let app = app();
    let handle = built(&app);
    record(&app);
    let clean = handle.render();
    app.registry
        .register(Box::new(Gauge::new("gym_servers_active", "mine").unwrap()))
        .unwrap();
    let text = handle.render();
    assert_eq!(
        text.matches("# TYPE gym_servers_active ").count(),
        0,
        "not yet written: {text}"
    );
    assert_eq!(text, clean);
    // Nor may it meet a bridged `metrics` family.
    let other = self::app();
    let (_r, handle) = PrometheusBuilder::new()
        .with_metrics_bridge(MetricsBridgeOptions::new())
        .with_registry(other.registry.clone())
        .build()
        .unwrap();
    let bridge = handle.metrics_recorder().unwrap();
    metrics::with_local_recorder(&bridge, || metrics::gauge!("pool.size").set(2.0));
    other
        .registry
        .register(Box::new(Gauge::new("pool_size", "mine").unwrap()))
        .unwrap();
    let text = handle.render();
    assert_eq!(text.matches("# TYPE pool_size gauge").count(), 1, "{text}");
    assert!(
        text.contains("pool_size{otel_scope_name=\"metrics\"} 2\n"),
        "{text}"
    );
    // The bridge's families come first, then the registry's.
    assert!(text.find("pool_size{").unwrap() < text.find("# HELP queue_depth").unwrap());
}

#[test]
fn promtool_finds_nothing_in_the_registrys_families() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Promtool);
    let app = app();
    let handle = built(&app);
    record(&app);
    let text = handle.render();
    let findings = promtool_check_metrics(&text).unwrap();
    let theirs: Vec<&String> = findings
        .iter()
        .filter(|f| ["sandbox", "queue"].iter().any(|n| f.contains(n)))
        .collect();
    assert!(theirs.is_empty(), "{findings:?}");
    // And nothing at all in what the registry adds alone.
    assert_eq!(
        promtool_check_metrics(after_ours(&text)).unwrap(),
        Vec::<String>::new()
    );
}
