//! Recording from a thread-local destructor (issue 15, item 3), OpenTelemetry
//! backend: timers kept in a `thread_local!` and dropped when their thread
//! exits are recorded (the verify tally included), and the process neither
//! panics nor aborts.
//!
//! The holder's destructor is registered before the thread's first record,
//! so it runs after the thread's tally shard id is gone: the case that
//! aborted the process (exit 134) inside `thread_local`'s id lookup. A
//! regression kills the whole process, so the scenario runs in a child (this
//! binary re-executed) and the parent reports how the child ended.

use crate::support::otlp_json::{point, u64_of};
use crate::support::SharedBuf;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use gym_testkit::thread_exit::{self, Expected};
use gym_testkit::{in_child, run_in_child};
use serde_json::Value;

const TEST: &str =
    "thread_local_destructor::timers_dropped_at_thread_exit_are_recorded_and_nothing_aborts";
/// Between these lines the child prints its console exports.
const BEGIN: &str = "--- exports ---";
const END: &str = "--- end ---";

fn scenario() {
    let exports = SharedBuf::default();
    let guard = OtelBuilder::new()
        .role(Role::server("tls-0", "resources"))
        .exporter(MetricsExporter::Console)
        .console_writer(exports.clone())
        .install()
        .expect("install");
    thread_exit::record_at_thread_exit();
    guard.shutdown().expect("the final export");
    println!("{BEGIN}\n{}{END}", exports.text());
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
    let last: Value = stdout
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .and_then(|(text, _)| text.lines().last())
        .map(|line| serde_json::from_str(line).expect("an export is one JSON line"))
        .unwrap_or_else(|| panic!("no export in the child's output:\n{stdout}"));

    let e = Expected::new();
    let int = |name: &str| u64_of(&point(&last, name, "sum")["asInt"]);
    assert_eq!(int(Instrument::VERIFY_COMPLETED.name), e.completed);
    assert_eq!(int(Instrument::VERIFY_SUCCEEDED.name), e.succeeded);
    let count = |name: &str| u64_of(&point(&last, name, "histogram")["count"]);
    assert_eq!(count(Instrument::VERIFY_DURATION.name), e.completed);
    assert_eq!(count(Instrument::ROLLOUT_DURATION.name), e.rollouts);
    assert_eq!(
        count(Instrument::HTTP_SERVER_REQUEST_DURATION.name),
        e.requests
    );
    let rate = point(&last, Instrument::VERIFY_SUCCESS_RATE.name, "gauge")["asDouble"].as_f64();
    assert_eq!(rate, Some(e.succeeded as f64 / e.completed as f64));
    eprintln!(
        "otel, thread-local destructors: {} exiting threads recorded {} verifications, {} rollouts and {} requests in all, all exported",
        e.threads, e.completed, e.rollouts, e.requests
    );
}
