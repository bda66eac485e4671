//! One resources server, launched as the fleet launches it (`gym-fleet server`),
//! driven over real HTTP: `POST /verify` answers a verdict (or the simulated
//! handler error), other routes are refused, closing its standard input stops
//! it, and its final report counts every verification. Runs on every backend;
//! on `prom` its own scrape also carries `http_server_request_duration_seconds`
//! by route and status, from the API's tower layer, and promtool finds no
//! family without its HELP.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use gym_testkit::{http_get, http_post};
use serde_json::Value;

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body:?}"))
}

#[test]
fn a_resources_server_verifies_over_http_and_reports_its_totals() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let mut server = Command::new(env!("CARGO_BIN_EXE_gym-fleet"))
        .args(["server", "--name", "resources-t", "--metrics-port", "0"])
        .args([
            "--seed",
            "5",
            "--pass-ratio",
            "0.5",
            "--error-ratio",
            "0.25",
        ])
        .args(["--verify-ms", "0..2"])
        .env("OTEL_METRICS_EXPORTER", "none")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gym-fleet server starts");
    let mut lines = BufReader::new(server.stdout.take().expect("piped")).lines();
    let ready = json(
        lines
            .next()
            .expect("a ready line")
            .expect("readable")
            .as_bytes(),
    );
    assert_eq!(ready["event"], "ready", "{ready}");
    let addr = ready["verify_addr"]
        .as_str()
        .expect("a verify address")
        .to_string();
    let url = format!("http://{addr}/verify");
    let content = [("content-type", "application/json")];

    let (mut passed, mut failed, mut errors) = (0, 0, 0);
    for task_id in 0..60 {
        let body = format!(r#"{{"task_id": {task_id}, "answer": "42"}}"#);
        let (status, _, answer) = http_post(&url, &content, body.as_bytes()).expect("answered");
        let answer = json(&answer);
        match status {
            200 => {
                assert_eq!(answer["task_id"], task_id, "{answer}");
                if answer["passed"].as_bool().expect("a verdict") {
                    passed += 1;
                } else {
                    failed += 1;
                }
            }
            500 => {
                assert!(answer["error"].is_string(), "{answer}");
                errors += 1;
            }
            other => panic!("unexpected status {other}: {answer}"),
        }
    }
    assert!(
        passed > 10 && failed > 0 && errors > 0,
        "{passed}/{failed}/{errors}"
    );

    let (status, _, answer) = http_post(&url, &content, b"not json").expect("answered");
    assert_eq!(status, 400, "{}", json(&answer));
    let other = format!("http://{addr}/elsewhere");
    assert_eq!(http_post(&other, &content, b"{}").expect("answered").0, 404);

    let scraped = cfg!(feature = "prom") && !cfg!(feature = "noop");
    assert_eq!(ready["metrics_addr"].is_string(), scraped, "{ready}");
    if let Some(metrics) = ready["metrics_addr"].as_str() {
        let (status, _, text) =
            http_get(&format!("http://{metrics}/metrics"), &[]).expect("scraped");
        assert_eq!(status, 200);
        let text = String::from_utf8_lossy(&text);
        let count = |labels: &str| -> f64 {
            let series = format!(
                "http_server_request_duration_seconds_count{{{labels},url_scheme=\"http\",otel_scope_name=\"gym-metrics\""
            );
            text.lines()
                .find(|l| l.starts_with(&series))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        };
        let verify = r#"http_route="/verify""#;
        let ok = format!(r#"http_request_method="POST",http_response_status_code="200",{verify}"#);
        assert_eq!(count(&ok), f64::from(passed + failed));
        let error = format!(
            r#"error_type="500",http_request_method="POST",http_response_status_code="500",{verify}"#
        );
        assert_eq!(count(&error), f64::from(errors));
        let bad = format!(r#"http_request_method="POST",http_response_status_code="400",{verify}"#);
        assert_eq!(count(&bad), 1.0);
        // The unknown path has no route: never the raw path as a label value.
        assert_eq!(
            count(r#"http_request_method="POST",http_response_status_code="404""#),
            1.0
        );
        assert!(!text.contains("elsewhere"), "{text}");
        // Every family it records has its HELP and TYPE: promtool finds
        // nothing beyond what it says of the contract's millisecond names.
        gym_testkit::require(gym_testkit::Tool::Promtool);
        let known = gym_testkit::contract_findings();
        let findings: Vec<String> = gym_testkit::promtool_check_metrics(&text)
            .expect("promtool runs")
            .into_iter()
            .filter(|f| !known.contains(f))
            .collect();
        assert!(findings.is_empty(), "promtool: {findings:?}\n{text}");
    }

    drop(server.stdin.take()); // the orchestrator's stop request
    let last = lines.map_while(Result::ok).last().expect("a final line");
    let last = json(last.as_bytes());
    assert_eq!(last["event"], "final", "{last}");
    // A handler error is a failed verification; the bad request is none at all.
    assert_eq!(last["completed"], 60, "{last}");
    assert_eq!(last["succeeded"], passed, "{last}");
    assert!(server.wait().expect("exits").success());
}
