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

mod support;

use std::cell::RefCell;
use std::sync::{Arc, Barrier};

use gym_metrics_api::backend::catalogue;
use gym_metrics_api::{
    HttpMethod, HttpServerRequestTimer, Role, RolloutTimer, UrlScheme, VerifyTimer,
};
use gym_metrics_otel::{MetricsExporter, OtelBuilder};
use gym_testkit::{in_child, run_in_child};
use serde_json::Value;
use support::otlp_json::{point, u64_of};
use support::SharedBuf;

const TEST: &str = "timers_dropped_at_thread_exit_are_recorded_and_nothing_aborts";
/// Threads that record once, then leave timers for their exit.
const RECORDING_THREADS: u64 = 8;
/// Between these lines the child prints its console exports.
const BEGIN: &str = "--- exports ---";
const END: &str = "--- end ---";

/// What a thread leaves behind when it exits.
#[derive(Default)]
struct Left {
    timers: Vec<Box<dyn std::any::Any>>,
}

thread_local! {
    static LEFT: RefCell<Left> = RefCell::new(Left::default());
}

/// Fills this thread's `LEFT` with a successful and a failed verification,
/// a rollout and an HTTP request, all to be recorded when the thread exits.
fn leave_timers_for_thread_exit() {
    let mut ok = VerifyTimer::start();
    ok.succeeded();
    let failed = VerifyTimer::start();
    let rollout = RolloutTimer::start();
    let request = HttpServerRequestTimer::start(HttpMethod::Post, Some("/verify"), UrlScheme::Http);
    LEFT.with(|left| {
        let timers = &mut left.borrow_mut().timers;
        timers.push(Box::new(ok));
        timers.push(Box::new(failed));
        timers.push(Box::new(rollout));
        timers.push(Box::new(request));
    });
}

fn scenario() {
    let exports = SharedBuf::default();
    let guard = OtelBuilder::new()
        .role(Role::server("tls-0", "resources"))
        .exporter(MetricsExporter::Console)
        .console_writer(exports.clone())
        .install()
        .expect("install");
    let all_left = Arc::new(Barrier::new(RECORDING_THREADS as usize));
    let mut threads: Vec<_> = (0..RECORDING_THREADS)
        .map(|_| {
            let all_left = Arc::clone(&all_left);
            std::thread::spawn(move || {
                LEFT.with(|_| {}); // registered first: destroyed after the shard id
                let mut first = VerifyTimer::start();
                first.succeeded();
                drop(first);
                drop(RolloutTimer::start());
                leave_timers_for_thread_exit();
                all_left.wait(); // exit together: the destructors race
            })
        })
        .collect();
    // And one thread whose only records are the ones left for its exit.
    threads.push(std::thread::spawn(leave_timers_for_thread_exit));
    for t in threads {
        t.join().expect("a recording thread panicked");
    }
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

    let threads = RECORDING_THREADS + 1;
    // Alive: one success and one rollout per recording thread; at exit, per
    // thread: a success, a failure, a rollout and a request.
    let completed = RECORDING_THREADS + 2 * threads;
    let succeeded = RECORDING_THREADS + threads;
    let int = |name: &str| u64_of(&point(&last, name, "sum")["asInt"]);
    assert_eq!(int(catalogue::VERIFY_COMPLETED.name), completed);
    assert_eq!(int(catalogue::VERIFY_SUCCEEDED.name), succeeded);
    let count = |name: &str| u64_of(&point(&last, name, "histogram")["count"]);
    assert_eq!(count(catalogue::VERIFY_DURATION.name), completed);
    assert_eq!(
        count(catalogue::ROLLOUT_DURATION.name),
        RECORDING_THREADS + threads
    );
    assert_eq!(count(catalogue::HTTP_SERVER_REQUEST_DURATION.name), threads);
    let rate = point(&last, catalogue::VERIFY_SUCCESS_RATE.name, "gauge")["asDouble"].as_f64();
    assert_eq!(rate, Some(succeeded as f64 / completed as f64));
    eprintln!(
        "otel, thread-local destructors: {threads} exiting threads recorded {} verifications, {threads} rollouts and {threads} requests at exit, all exported",
        2 * threads
    );
}
