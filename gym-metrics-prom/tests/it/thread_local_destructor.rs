//! Recording from a thread-local destructor (issue 15, item 3), Prometheus
//! backend: timers kept in a `thread_local!` and dropped when their thread
//! exits are recorded, and the process neither panics nor aborts.
//!
//! The holder's destructor is registered before the thread's first record,
//! so it runs after the thread's shard id is gone: the case that aborted the
//! process (exit 134) inside `thread_local`'s id lookup. A regression kills the
//! whole process, so the scenario runs in a child (this binary re-executed)
//! and the parent reports how the child ended.

use crate::common::exposition::parse;
use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::thread_exit::{self, Expected};
use gym_testkit::{in_child, run_in_child};

const TEST: &str =
    "thread_local_destructor::timers_dropped_at_thread_exit_are_recorded_and_nothing_aborts";
/// Between these lines the child prints its exposition.
const BEGIN: &str = "--- exposition ---";
const END: &str = "--- end ---";

fn scenario() {
    let (handle, _installation) = PrometheusBuilder::new()
        .role(Role::server("tls-0", "resources"))
        .install_recorder()
        .expect("install");
    thread_exit::record_at_thread_exit();
    println!("{BEGIN}\n{}{END}", handle.render());
}

#[test]
fn timers_dropped_at_thread_exit_are_recorded_and_nothing_aborts() {
    if in_child() {
        scenario();
        return;
    }
    let stdout = run_in_child(TEST).unwrap_or_else(|e| {
        panic!("recording from a thread-local destructor must never panic nor abort: {e}")
    });
    let exposition = stdout
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(text, _)| text)
        .unwrap_or_else(|| panic!("no exposition in the child's output:\n{stdout}"));

    let mut values = std::collections::BTreeMap::new();
    for family in parse(exposition).into_values() {
        for ((name, labels), v) in family.samples {
            if !labels.contains_key("le") {
                let error = labels.get("error_type").cloned().unwrap_or_default();
                values.insert((name, error), v);
            }
        }
    }
    let value = |name: &str, error: &str| {
        values
            .get(&(name.to_string(), error.to_string()))
            .copied()
            .unwrap_or_else(|| panic!("no {name} in\n{exposition}"))
    };
    let e = Expected::new();
    assert_eq!(value("gym_verify_completed_total", ""), e.completed as f64);
    assert_eq!(value("gym_verify_succeeded_total", ""), e.succeeded as f64);
    assert_eq!(
        value("gym_verify_duration_ms_milliseconds_count", ""),
        e.completed as f64
    );
    assert_eq!(
        value("gym_rollout_duration_ms_milliseconds_count", ""),
        e.rollouts as f64
    );
    assert_eq!(
        value("http_server_request_duration_seconds_count", "_OTHER"),
        e.requests as f64
    );
    eprintln!(
        "prom, thread-local destructors: {} exiting threads recorded {} verifications, {} rollouts and {} requests in all, all exported",
        e.threads, e.completed, e.rollouts, e.requests
    );
}

/// Starts (and records) a verification when its thread-local is destroyed.
struct StartsATimer;

impl Drop for StartsATimer {
    fn drop(&mut self) {
        gym_metrics_api::VerifyTimer::start().finish(true);
    }
}

thread_local! {
    static LATE: StartsATimer = const { StartsATimer };
}

const LATE_TEST: &str =
    "thread_local_destructor::a_timer_started_after_the_opentelemetry_context_is_gone_records_without_an_exemplar";

fn late_scenario() {
    use opentelemetry::trace::{Tracer, TracerProvider};
    let (handle, _installation) = PrometheusBuilder::new()
        .role(Role::server("tls-1", "resources"))
        .install_recorder()
        .expect("install");
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let tracer = provider.tracer("late");
    std::thread::spawn(move || {
        // First the holder, then the context (a span), then the exemplars'
        // own guard: at exit they go in reverse, the holder last.
        LATE.with(|_| {});
        tracer.in_span("rollout", |_| drop(gym_metrics_api::RolloutTimer::start()));
    })
    .join()
    .expect("the thread exits cleanly");
    println!("{BEGIN}\n{}{END}", handle.render_openmetrics());
}

#[test]
fn a_timer_started_after_the_opentelemetry_context_is_gone_records_without_an_exemplar() {
    if in_child() {
        late_scenario();
        return;
    }
    let stdout = run_in_child(LATE_TEST).unwrap_or_else(|e| {
        panic!("a timer started in a thread-local destructor must never panic nor abort: {e}")
    });
    let exposition = stdout
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(text, _)| text)
        .unwrap_or_else(|| panic!("no exposition in the child's output:\n{stdout}"));
    assert!(exposition.contains("gym_verify_completed_total{otel_scope_name=\"gym-metrics\",otel_scope_version=\"0.1.0\"} 1\n"), "{exposition}");
    // The rollout, timed in its span, carries it; the late verification none.
    assert_eq!(
        exposition.matches("# {trace_id=").count(),
        1,
        "{exposition}"
    );
}
