//! Process lifecycle (RELIABILITY.md, case 5): SIGTERM during export flushes
//! the final values. The real `gym-fleet` (otel backend, 5 processes) pushes
//! OTLP/HTTP every 300 ms to a loopback collector that answers each export
//! 200 ms late, so exports are in flight most of the time; SIGTERM arrives
//! mid-run. The collector then holds, process by process, the final totals:
//! the verifications the servers counted equal the `/verify` calls the agent
//! reported, and the rollouts equal the agent's count.
#![cfg(all(feature = "otel", not(feature = "prom")))]

// Only the fleet runner and the summary reader are used here.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{fast_fleet_args, fleet_summary, send_signal, Fleet};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use prost::Message;

/// The latest value of each gym total, per process (`service.name`).
type Latest = Arc<Mutex<BTreeMap<String, BTreeMap<String, f64>>>>;

/// How late the collector answers each export.
const ANSWER_DELAY: Duration = Duration::from_millis(200);

/// A loopback OTLP/HTTP receiver keeping the latest totals of each process.
struct Collector {
    port: u16,
    latest: Latest,
    stop: Arc<AtomicBool>,
}

impl Collector {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let latest: Latest = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (l, s) = (Arc::clone(&latest), Arc::clone(&stop));
        std::thread::spawn(move || {
            // Bounded: stops when told, or after 2 minutes whatever happens.
            let started = Instant::now();
            while !s.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(120) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let l = Arc::clone(&l);
                        std::thread::spawn(move || serve(stream, &l));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self { port, latest, stop }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1/metrics", self.port)
    }

    fn latest(&self) -> BTreeMap<String, BTreeMap<String, f64>> {
        self.latest.lock().unwrap().clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Answers requests on one connection until it closes.
fn serve(stream: TcpStream, latest: &Latest) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        std::thread::sleep(ANSWER_DELAY);
        if let Ok(request) = ExportMetricsServiceRequest::decode(body.as_slice()) {
            keep(&request, latest);
        }
        let ok =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if writer.write_all(ok).is_err() {
            return;
        }
    }
}

/// Records the totals of `request` as its process's latest.
fn keep(request: &ExportMetricsServiceRequest, latest: &Latest) {
    for rm in &request.resource_metrics {
        let service = rm
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
            .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
                Value::StringValue(s) => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let mut values = BTreeMap::new();
        for m in rm.scope_metrics.iter().flat_map(|s| &s.metrics) {
            match &m.data {
                Some(metric::Data::Histogram(h)) => {
                    if let Some(p) = h.data_points.first() {
                        values.insert(format!("{}.count", m.name), p.count as f64);
                    }
                }
                Some(metric::Data::Sum(s)) => {
                    if let Some(p) = s.data_points.first() {
                        values.insert(m.name.clone(), number(&p.value));
                    }
                }
                Some(metric::Data::Gauge(g)) => {
                    if let Some(p) = g.data_points.first() {
                        values.insert(m.name.clone(), number(&p.value));
                    }
                }
                _ => {}
            }
        }
        latest.lock().unwrap().insert(service, values);
    }
}

fn number(v: &Option<number_data_point::Value>) -> f64 {
    match v {
        Some(number_data_point::Value::AsInt(i)) => *i as f64,
        Some(number_data_point::Value::AsDouble(d)) => *d,
        None => f64::NAN,
    }
}

fn total(latest: &BTreeMap<String, BTreeMap<String, f64>>, metric: &str) -> f64 {
    latest.values().filter_map(|m| m.get(metric)).sum()
}

#[test]
fn sigterm_mid_export_leaves_the_final_totals_at_the_collector() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = Collector::start();
    let mut args = fast_fleet_args(3, 1, 0.7);
    args.extend(["--duration", "60"].map(String::from));
    let fleet_env = [
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", collector.endpoint()),
        (
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            "http/protobuf".to_string(),
        ),
        ("OTEL_METRIC_EXPORT_INTERVAL", "300".to_string()),
        ("OTEL_SERVICE_NAME", "gym".to_string()),
    ];
    let mut fleet = Fleet::start(&args, &fleet_env);

    // Mid-run: every process has exported, the agent has rollouts counted.
    let started = Instant::now();
    loop {
        let latest = collector.latest();
        if latest.len() >= 5 && total(&latest, "gym.rollout.duration_ms.count") >= 5.0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "not every process exported: {latest:?}\n{}",
            fleet.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));

    send_signal(fleet.pid(), "TERM");
    let (status, output) = fleet.wait(Duration::from_secs(30));
    assert!(
        status.success(),
        "SIGTERM must end the fleet cleanly: {status}\n{output}"
    );
    let summary = fleet_summary(&output);
    let latest = collector.latest();
    eprintln!("sigterm: summary {summary:?}\ncollector {latest:?}");

    assert_eq!(summary["crashed"], 0.0, "{output}");
    assert!(summary["rollouts"] > 0.0, "{output}");
    assert_eq!(
        total(&latest, "gym.rollout.duration_ms.count"),
        summary["rollouts"],
        "rollouts at the collector vs the agent's count\n{output}"
    );
    assert_eq!(
        total(&latest, "gym.verify.completed"),
        summary["verify_calls"],
        "verifications at the collector vs the agent's /verify calls\n{output}"
    );
    assert_eq!(
        total(&latest, "gym.verify.succeeded"),
        summary["verified_ok"],
        "successes at the collector vs the agent's count\n{output}"
    );
    // The orchestrator's last word: the fleet is gone.
    let orchestrator = latest
        .iter()
        .find(|(service, _)| service.ends_with("orchestrator"))
        .map(|(_, m)| m.get("gym.servers.active").copied());
    assert_eq!(orchestrator, Some(Some(0.0)), "{latest:?}");
}
