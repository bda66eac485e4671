//! A collector that accepts connections and never answers: shutdown (and
//! dropping the guard) still return within the deadline, and recording is
//! not slowed by the hung export.
#![cfg(any(feature = "http-proto", feature = "grpc"))]

use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::record_cost_ns;
#[cfg(feature = "http-proto")]
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtlpProtocol, ShutdownError};

/// Accepts every connection and keeps it open, reading nothing back.
fn black_hole() -> (String, Arc<Mutex<Vec<TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    (format!("http://{addr}"), held)
}

const DEADLINE: Duration = Duration::from_millis(800);

fn pipeline(
    protocol: OtlpProtocol,
    base: &str,
) -> (gym_metrics_otel::OtelRecorder, gym_metrics_otel::OtelGuard) {
    let endpoint = match protocol {
        OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson => format!("{base}/v1/metrics"),
        OtlpProtocol::Grpc => base.to_string(),
    };
    OtelBuilder::new()
        .role(Role::orchestrator())
        .protocol(protocol)
        .endpoint(endpoint)
        .export_interval(Duration::from_millis(200))
        .shutdown_timeout(DEADLINE)
        .build()
        .unwrap()
}

fn shutdown_is_bounded(protocol: OtlpProtocol) {
    let (base, held) = black_hole();
    let (recorder, guard) = pipeline(protocol, &base);
    let before = record_cost_ns(&recorder, 5, 2_000);
    // Let a periodic export get stuck on the black hole first.
    std::thread::sleep(Duration::from_millis(400));
    let stuck = record_cost_ns(&recorder, 5, 2_000);
    eprintln!(
        "{protocol:?}: record cost {before:.0} ns before, {stuck:.0} ns while an export hangs"
    );
    assert!(
        stuck < before * 3.0 + 2_000.0,
        "recording slowed by a hung export: {before} -> {stuck} ns"
    );
    let start = Instant::now();
    let result = guard.shutdown();
    let took = start.elapsed();
    eprintln!("{protocol:?}: shutdown against a black hole took {took:?}: {result:?}");
    assert_eq!(result, Err(ShutdownError::TimedOut { deadline: DEADLINE }));
    assert!(took < DEADLINE + Duration::from_millis(300), "{took:?}");
    assert!(
        !held.lock().unwrap().is_empty(),
        "the exporter never connected"
    );
}

#[cfg(feature = "http-proto")]
#[test]
fn http_shutdown_returns_within_the_deadline() {
    if gym_testkit::ran_in_child() {
        return;
    }
    shutdown_is_bounded(OtlpProtocol::HttpProtobuf);
}

#[cfg(feature = "grpc")]
#[test]
fn grpc_shutdown_returns_within_the_deadline() {
    if gym_testkit::ran_in_child() {
        return;
    }
    shutdown_is_bounded(OtlpProtocol::Grpc);
}

#[cfg(feature = "http-proto")]
#[test]
fn dropping_the_guard_is_bounded_too() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (base, _held) = black_hole();
    let (recorder, guard) = pipeline(OtlpProtocol::HttpProtobuf, &base);
    recorder.record_rollout_duration_ms(120.0);
    std::thread::sleep(Duration::from_millis(400));
    let start = Instant::now();
    drop(guard);
    let took = start.elapsed();
    eprintln!("drop against a black hole took {took:?}");
    assert!(took < DEADLINE + Duration::from_millis(300), "{took:?}");
}

#[cfg(feature = "http-proto")]
#[test]
fn the_default_deadline_is_five_seconds() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (base, _held) = black_hole();
    let (recorder, guard) = OtelBuilder::new()
        .endpoint(format!("{base}/v1/metrics"))
        .export_interval(Duration::from_millis(200))
        .build()
        .unwrap();
    recorder.record_rollout_duration_ms(120.0);
    std::thread::sleep(Duration::from_millis(400));
    let start = Instant::now();
    let result = guard.shutdown();
    let took = start.elapsed();
    eprintln!("default settings: shutdown against a black hole took {took:?}: {result:?}");
    let five = Duration::from_secs(5);
    assert_eq!(result, Err(ShutdownError::TimedOut { deadline: five }));
    assert!(
        took >= five && took < five + Duration::from_millis(300),
        "{took:?}"
    );
}
