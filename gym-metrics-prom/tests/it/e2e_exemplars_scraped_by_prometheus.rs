//! e2e: timers started inside sampled OpenTelemetry spans (feature
//! `exemplars`) leave their spans' trace ids as exemplars, and real
//! Prometheus 2.53 stores them: one with native histograms and exemplar
//! storage on (protobuf: the classic buckets' exemplars and the native
//! histogram's), one with exemplar storage alone (OpenMetrics text). A
//! record outside any span leaves none. (Global state: its own process.)

use std::collections::BTreeSet;
use std::time::Duration;

use gym_metrics_api::{RolloutTimer, VerifyTimer};
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{require, Prometheus, Tool};
use opentelemetry::trace::{TraceContextExt, Tracer, TracerProvider};

const ROLLOUT: &str = "gym_rollout_duration_ms_milliseconds";

/// Waits until `promql`'s exemplars carry every one of `expected`, and
/// returns them.
fn wait_for_exemplars(
    prometheus: &Prometheus,
    promql: &str,
    expected: &BTreeSet<String>,
) -> BTreeSet<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got: BTreeSet<String> = prometheus
            .exemplar_trace_ids(promql)
            .unwrap()
            .into_iter()
            .collect();
        if got.is_superset(expected) || std::time::Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn rollout_trace_ids_reach_prometheus_as_exemplars_in_protobuf_and_openmetrics() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let guard = PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .unwrap();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let tracer = provider.tracer("gym-fleet");
    // Three rollouts in three buckets (le 100, 250 and 500 ms), each in a
    // span of its own; one verification too; and one rollout outside.
    let mut rollouts = BTreeSet::new();
    for ms in [5, 150, 300] {
        tracer.in_span("rollout", |cx| {
            rollouts.insert(cx.span().span_context().trace_id().to_string());
            let _timer = RolloutTimer::start();
            std::thread::sleep(Duration::from_millis(ms));
        });
    }
    let verify = tracer.in_span("verify", |cx| {
        let mut timer = VerifyTimer::start();
        timer.succeeded();
        cx.span().span_context().trace_id().to_string()
    });
    drop(RolloutTimer::start());
    let text = guard.handle().render_openmetrics();
    assert_eq!(text.matches("# {trace_id=").count(), 4, "{text}");
    assert!(
        !guard.handle().render().contains("trace_id"),
        "0.0.4 carries none"
    );

    let config = |extra: &str| {
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gym\n{extra}    \
             static_configs:\n      - targets: ['{}']\n",
            guard.local_addr()
        )
    };
    let native = Prometheus::start_with_features(
        &config("    scrape_classic_histograms: true\n"),
        &["native-histograms", "exemplar-storage"],
    )
    .unwrap();
    let text = Prometheus::start_with_features(&config(""), &["exemplar-storage"]).unwrap();
    for (name, prometheus, series) in [
        (
            "protobuf, classic buckets",
            &native,
            format!("{ROLLOUT}_bucket"),
        ),
        ("protobuf, native histogram", &native, ROLLOUT.to_string()),
        ("OpenMetrics", &text, format!("{ROLLOUT}_bucket")),
    ] {
        let got = wait_for_exemplars(prometheus, &series, &rollouts);
        assert_eq!(got, rollouts, "{name}: {}", prometheus.log_tail());
    }
    let verify_ids = wait_for_exemplars(
        &text,
        "gym_verify_duration_ms_milliseconds_bucket",
        &BTreeSet::from([verify.clone()]),
    );
    assert_eq!(verify_ids, BTreeSet::from([verify]));
    drop(provider);
    guard.shutdown().expect("the endpoint stops cleanly");
}
