//! `OTEL_METRIC_EXPORT_TIMEOUT` bounds one periodic export: against a
//! collector that accepts connections and never answers, with an OTLP
//! timeout of a minute, the export gives up at the metric export timeout
//! and the failure is logged (uncapped, the first export would hang for the
//! whole minute and nothing would be logged).
#![cfg(feature = "http-proto")]

use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::counting_logger::CountingLogger;
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_otel::OtelBuilder;

/// Accepts every connection and keeps it open, answering nothing.
fn black_hole() -> (u16, Arc<Mutex<Vec<TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    (port, held)
}

#[test]
fn the_metric_export_timeout_caps_a_longer_otlp_timeout() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let log = CountingLogger::install();
    let (port, held) = black_hole();
    let endpoint = format!("http://127.0.0.1:{port}/v1/metrics");
    let vars = [
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", endpoint.clone()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "60000".to_string()),
        ("OTEL_METRIC_EXPORT_TIMEOUT", "300".to_string()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "100".to_string()),
        ("GYM_METRICS_OTEL_SHUTDOWN_TIMEOUT", "1000".to_string()),
    ];
    let lookup = |name: &str| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    let (recorder, guard) = OtelBuilder::from_env_lookup(lookup)
        .unwrap()
        .role(Role::server("s-0", "resources"))
        .build()
        .unwrap();
    recorder.record_verify_ms(40.0, true);

    // Waiting for an event, not timing it: well under the OTLP timeout.
    let waiting_since = Instant::now();
    while log.lines(log::Level::Warn).is_empty()
        && waiting_since.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let warnings = log.lines(log::Level::Warn);
    assert!(
        !held.lock().unwrap().is_empty(),
        "the exporter never connected"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(&endpoint) && w.contains("failed")),
        "no export gave up within 20 s of a 300 ms metric export timeout: {warnings:#?}"
    );
    // The final export hangs like the others; the guard's deadline bounds it.
    let _ = guard.shutdown();
}
