//! Recording from a thread-local destructor (issue 15, item 3), Prometheus
//! backend: timers kept in a `thread_local!` and dropped when their thread
//! exits are recorded, and the process neither panics nor aborts.
//!
//! The holder's destructor is registered before the thread's first record,
//! so it runs after the thread's shard id is gone: the case that aborted the
//! process (exit 134) inside `thread_local`'s id lookup. A regression kills the
//! whole process, so the scenario runs in a child (this binary re-executed)
//! and the parent reports how the child ended.

mod common;

use std::cell::RefCell;
use std::sync::{Arc, Barrier};

use common::exposition::parse;
use gym_metrics_api::{
    HttpMethod, HttpServerRequestTimer, Role, RolloutTimer, UrlScheme, VerifyTimer,
};
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{in_child, run_in_child};

const TEST: &str = "timers_dropped_at_thread_exit_are_recorded_and_nothing_aborts";
/// Threads that record once, then leave timers for their exit.
const RECORDING_THREADS: u64 = 8;
/// Between these lines the child prints its exposition.
const BEGIN: &str = "--- exposition ---";
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
    let (handle, _installation) = PrometheusBuilder::new()
        .role(Role::server("tls-0", "resources"))
        .install_recorder()
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
    let threads = (RECORDING_THREADS + 1) as f64;
    let recorded_alive = RECORDING_THREADS as f64;
    // Alive: one success and one rollout per recording thread; at exit, per
    // thread: a success, a failure, a rollout and a request.
    let completed = recorded_alive + 2.0 * threads;
    let succeeded = recorded_alive + threads;
    assert_eq!(value("gym_verify_completed_total", ""), completed);
    assert_eq!(value("gym_verify_succeeded_total", ""), succeeded);
    assert_eq!(
        value("gym_verify_duration_ms_milliseconds_count", ""),
        completed
    );
    assert_eq!(
        value("gym_rollout_duration_ms_milliseconds_count", ""),
        recorded_alive + threads
    );
    assert_eq!(
        value("http_server_request_duration_seconds_count", "_OTHER"),
        threads
    );
    eprintln!(
        "prom, thread-local destructors: {threads} exiting threads recorded {} verifications, {} rollouts and {threads} requests at exit, all exported",
        2.0 * threads,
        threads
    );
}
