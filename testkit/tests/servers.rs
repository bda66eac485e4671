//! The testkit against the real tools: each server starts, answers queries and dies on drop.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gym_testkit::{
    http_get, http_post, promtool_check_metrics, require, Prometheus, Rotel, Tool, VictoriaMetrics,
};

const PATIENCE: Duration = Duration::from_secs(10);

/// A tiny exposition endpoint on loopback: every request gets `body`.
fn serve_exposition(body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(response.as_bytes());
        }
    });
    addr.to_string()
}

fn pid_is_alive(url: &str) -> bool {
    http_get(&format!("{url}/health"), &[]).is_ok()
        || http_get(&format!("{url}/-/ready"), &[]).is_ok()
}

#[test]
fn prometheus_scrapes_itself() {
    require(Tool::Prometheus);
    let started = Instant::now();
    let config = "global:\n  scrape_interval: 100ms\n  scrape_timeout: 100ms\n\
                  scrape_configs:\n  - job_name: self\n    static_configs:\n      - targets: ['127.0.0.1:{{PORT}}']\n";
    let prometheus = Prometheus::start_with_config(config).unwrap();
    eprintln!("started: {:?}", started.elapsed());
    let up = prometheus
        .wait_for("up{job=\"self\"}", PATIENCE, |s| {
            s.len() == 1 && s[0].value == 1.0
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    assert_eq!(up[0].labels["__name__"], "up");
    let scalar = prometheus.query("scalar(up{job=\"self\"}) * 2").unwrap();
    assert_eq!(scalar[0].value, 2.0);
    let url = prometheus.url();
    drop(prometheus);
    assert!(!pid_is_alive(&url), "prometheus still answers after drop");
    eprintln!("prometheus_scrapes_itself: {:?}", started.elapsed());
}

#[test]
fn prometheus_scrapes_the_given_targets_as_job_gym() {
    require(Tool::Prometheus);
    let target = serve_exposition("# TYPE gym_probe gauge\ngym_probe 42\n");
    let prometheus =
        Prometheus::start(std::slice::from_ref(&target), Duration::from_millis(100)).unwrap();
    let samples = prometheus
        .wait_for("gym_probe", PATIENCE, |s| !s.is_empty())
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    assert_eq!(samples[0].value, 42.0);
    assert_eq!(samples[0].labels["job"], "gym");
    assert_eq!(samples[0].labels["instance"], target);
}

#[test]
fn victoria_metrics_answers_what_was_imported() {
    require(Tool::VictoriaMetrics);
    let vm = VictoriaMetrics::start().unwrap();
    let (status, _, body) = http_post(
        &format!("{}/api/v1/import/prometheus", vm.url()),
        &[("Content-Type", "text/plain")],
        b"gym_import_probe{kind=\"x\"} 7\n",
    )
    .unwrap();
    assert!(
        status == 204 || status == 200,
        "import: HTTP {status} {}",
        String::from_utf8_lossy(&body)
    );
    let samples = vm
        .wait_for("gym_import_probe", PATIENCE, |s| !s.is_empty())
        .unwrap_or_else(|e| panic!("{e}\n{}", vm.log_tail()));
    assert_eq!(samples[0].value, 7.0);
    assert_eq!(samples[0].labels["kind"], "x");
    assert!(vm
        .otlp_http_metrics_endpoint()
        .ends_with("/opentelemetry/v1/metrics"));
}

#[test]
fn rotel_forwards_otlp_to_victoria_metrics() {
    require(Tool::VictoriaMetrics);
    require(Tool::Rotel);
    let vm = VictoriaMetrics::start().unwrap();
    let rotel = Rotel::start(&vm).unwrap();
    assert!(rotel.grpc_endpoint().starts_with("http://127.0.0.1:"));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let payload = format!(
        r#"{{"resourceMetrics":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"testkit"}}}}]}},
        "scopeMetrics":[{{"metrics":[{{"name":"gym.rotel.probe","gauge":{{"dataPoints":[{{"asDouble":3,"timeUnixNano":"{now}"}}]}}}}]}}]}}]}}"#
    );
    let (status, _, body) = http_post(
        &format!("{}/v1/metrics", rotel.http_endpoint()),
        &[("Content-Type", "application/json")],
        payload.as_bytes(),
    )
    .unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let samples = vm
        .wait_for("gym_rotel_probe", PATIENCE, |s| !s.is_empty())
        .unwrap_or_else(|e| panic!("{e}\nrotel:\n{}\nvm:\n{}", rotel.log_tail(), vm.log_tail()));
    assert_eq!(samples[0].value, 3.0);
    assert_eq!(samples[0].labels["service_name"], "testkit");
}

#[test]
fn promtool_reports_lint_findings() {
    require(Tool::Promtool);
    let clean = promtool_check_metrics(
        "# HELP gym_ok_total fine.\n# TYPE gym_ok_total counter\ngym_ok_total 1\n",
    )
    .unwrap();
    assert!(clean.is_empty(), "{clean:?}");
    let findings =
        promtool_check_metrics("# HELP gym_bad no suffix.\n# TYPE gym_bad counter\ngym_bad 1\n")
            .unwrap();
    assert!(
        findings.iter().any(|f| f.contains("_total")),
        "{findings:?}"
    );
}

#[test]
fn a_bad_config_fails_with_the_server_log() {
    require(Tool::Prometheus);
    let err = Prometheus::start_with_config("scrape_configs: [[[\n").unwrap_err();
    assert!(err.contains("prometheus (pid "), "{err}");
    assert!(
        err.to_lowercase().contains("error"),
        "no log tail in: {err}"
    );
}
