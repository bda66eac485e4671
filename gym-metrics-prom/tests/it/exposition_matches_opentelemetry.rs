//! For the same recordings, our exposition carries exactly what
//! `opentelemetry-prometheus` 0.33 renders over `opentelemetry_sdk` 0.33:
//! families, TYPE, HELP, label sets (scope labels, `le`, `target_info`) and values.
//! And our families collected through the `prometheus` crate's registry and
//! `TextEncoder` (`PrometheusHandle::collector`, feature `prometheus-collector`,
//! which this crate's dev-dependency on itself turns on for every test build)
//! are byte for byte our render.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::exposition::{parse, Family};
use gym_metrics_api::backend::{Boundaries, Instrument, Recorder};
use gym_metrics_api::{HttpMethod, HttpServerRequest, Role, UrlScheme};
use gym_metrics_prom::{PrometheusBuilder, SCOPE_NAME, SCOPE_VERSION};
use opentelemetry::metrics::MeterProvider;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::Resource;
use std::sync::atomic::{AtomicU64, Ordering};

const INSTANCE_ID: &str = "0b5c4e2a-equality-test";
/// The run id both sides carry as `nemo.run.id`.
const RUN_ID: &str = "run-equality-7";

/// One recording, applied identically to both backends.
#[derive(Clone, Copy)]
enum Op {
    Rollout(f64),
    Verify(f64, bool),
    Servers(u64),
    /// One HTTP server request: method, route, status (none: no response), seconds.
    Http(HttpMethod, Option<&'static str>, Option<u16>, f64),
}

impl Op {
    fn http_request(&self) -> Option<HttpServerRequest> {
        match *self {
            Op::Http(method, route, status, seconds) => Some(HttpServerRequest::new(
                method,
                route,
                UrlScheme::Http,
                status,
                Duration::from_secs_f64(seconds),
            )),
            _ => None,
        }
    }
}

/// The attributes gym-metrics-otel records for a request (an integer status,
/// absent attributes left out).
fn http_attributes(r: &HttpServerRequest) -> Vec<KeyValue> {
    let mut kv = vec![
        KeyValue::new("http.request.method", r.method().as_str()),
        KeyValue::new("url.scheme", r.scheme().as_str()),
    ];
    if let Some(route) = r.route() {
        kv.push(KeyValue::new("http.route", route));
    }
    if let Some(status) = r.status_code() {
        kv.push(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    if let Some(error) = r.error_type() {
        kv.push(KeyValue::new("error.type", error));
    }
    kv
}

/// A known mix of requests: several routes, a 404 with no route, a 500, a
/// request without a response, an unusual method, values on a bound and past the last.
const HTTP_MIX: &[Op] = &[
    Op::Http(HttpMethod::Post, Some("/verify"), Some(200), 0.004),
    Op::Http(HttpMethod::Post, Some("/verify"), Some(200), 0.005),
    Op::Http(HttpMethod::Post, Some("/verify"), Some(200), 0.3),
    Op::Http(HttpMethod::Get, Some("/tasks/{id}"), Some(200), 0.02),
    Op::Http(HttpMethod::Get, None, Some(404), 0.001),
    Op::Http(HttpMethod::Post, Some("/verify"), Some(500), 12.5),
    Op::Http(HttpMethod::Post, Some("/verify"), None, 1.0),
    Op::Http(HttpMethod::Other, None, Some(404), 0.0),
];

/// The issue's sequence.
const SEQUENCE: &[Op] = &[
    Op::Rollout(120.0),
    Op::Rollout(3400.0),
    Op::Rollout(45000.0),
    Op::Verify(40.0, true),
    Op::Verify(250.0, true),
    Op::Verify(1200.0, true),
    Op::Verify(8000.0, false),
    Op::Servers(4),
];

fn ours(role: &Role, bounds: &Boundaries, ops: &[Op]) -> String {
    let (recorder, handle) = PrometheusBuilder::new()
        .role(role.clone())
        .histogram_boundaries(bounds.as_slice().to_vec())
        .unwrap()
        .resource_attribute("service.instance.id", INSTANCE_ID)
        .gym_env(
            gym_metrics_kit::env::GymEnv::read(|name| {
                (name == "NEMO_GYM_OTEL_RUN_ID").then(|| RUN_ID.to_string())
            })
            .unwrap(),
        )
        .build()
        .unwrap();
    for op in ops {
        match *op {
            Op::Rollout(ms) => recorder.record_rollout_duration_ms(ms),
            Op::Verify(ms, ok) => recorder.record_verify_ms(ms, ok),
            // As the facade does: only an orchestrator's call reaches a recorder.
            Op::Servers(n) if role.writes_fleet_size() => recorder.record_active_servers(n),
            Op::Servers(_) => {}
            Op::Http(..) => {
                if let Some(request) = op.http_request() {
                    recorder.record_http_server_request(&request);
                }
            }
        }
    }
    let rendered = handle.render();
    // The same families through the `prometheus` crate: our collector in a
    // registry, encoded by its TextEncoder, is byte for byte the direct render.
    let registry = prometheus::Registry::new();
    registry.register(Box::new(handle.collector())).unwrap();
    let mut encoded = Vec::new();
    prometheus::Encoder::encode(
        &prometheus::TextEncoder::new(),
        &registry.gather(),
        &mut encoded,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(encoded).unwrap(),
        rendered,
        "TextEncoder vs render"
    );
    rendered
}

fn opentelemetry(role: &Role, bounds: &Boundaries, ops: &[Op]) -> String {
    let registry = prometheus::Registry::new();
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .unwrap();
    // NeMo Gym's resource keys, written out here rather than taken from
    // the API, so that a changed key shows up as a difference.
    let attributes = vec![
        KeyValue::new("service.name", format!("nemo-gym/{}", role.name())),
        KeyValue::new("nemo.gym.service_group", "nemo-gym"),
        KeyValue::new("nemo.run.id", RUN_ID),
        KeyValue::new("nemo.gym.server.name", role.name().to_string()),
        KeyValue::new("nemo.gym.server.type", role.server_type().to_string()),
        KeyValue::new("gym.role", role.kind()),
        KeyValue::new("service.instance.id", INSTANCE_ID),
    ];
    let resource = Resource::builder_empty()
        .with_detectors(&[Box::new(TelemetryResourceDetector)])
        .with_attributes(attributes)
        .build();
    let provider = SdkMeterProvider::builder()
        .with_reader(exporter)
        .with_resource(resource)
        .build();
    let meter = provider.meter_with_scope(
        InstrumentationScope::builder(SCOPE_NAME)
            .with_version(SCOPE_VERSION)
            .build(),
    );
    let histogram = |i: Instrument| {
        meter
            .f64_histogram(i.name)
            .with_unit(i.unit.unwrap_or_default())
            .with_description(i.description)
            .with_boundaries(bounds.as_slice().to_vec())
            .build()
    };
    let rollout = histogram(Instrument::ROLLOUT_DURATION);
    let verify = histogram(Instrument::VERIFY_DURATION);
    // The rate and the counters are observed at collection from counts
    // kept beside the histograms (as gym-metrics-otel observes its core's).
    let tally = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let t = Arc::clone(&tally);
    let _rate = meter
        .f64_observable_gauge(Instrument::VERIFY_SUCCESS_RATE.name)
        .with_description(Instrument::VERIFY_SUCCESS_RATE.description)
        .with_callback(move |o| {
            let [completed, succeeded] = [0, 1].map(|i| t[i].load(Ordering::Relaxed));
            if completed > 0 {
                o.observe(succeeded as f64 / completed as f64, &[]);
            }
        })
        .build();
    let t = Arc::clone(&tally);
    let _completed = meter
        .u64_observable_counter(Instrument::VERIFY_COMPLETED.name)
        .with_description(Instrument::VERIFY_COMPLETED.description)
        .with_callback(move |o| o.observe(t[0].load(Ordering::Relaxed), &[]))
        .build();
    let t = Arc::clone(&tally);
    let _succeeded = meter
        .u64_observable_counter(Instrument::VERIFY_SUCCEEDED.name)
        .with_description(Instrument::VERIFY_SUCCEEDED.description)
        .with_callback(move |o| o.observe(t[1].load(Ordering::Relaxed), &[]))
        .build();
    let servers = meter
        .u64_gauge(Instrument::SERVERS_ACTIVE.name)
        .with_description(Instrument::SERVERS_ACTIVE.description)
        .build();
    let http = Instrument::HTTP_SERVER_REQUEST_DURATION;
    let http_server = meter
        .f64_histogram(http.name)
        .with_unit(http.unit.unwrap_or_default())
        .with_description(http.description)
        .with_boundaries(Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S.to_vec())
        .build();

    for op in ops {
        match *op {
            Op::Rollout(ms) => rollout.record(ms, &[]),
            Op::Verify(ms, success) => {
                verify.record(ms, &[]);
                tally[0].fetch_add(1, Ordering::Relaxed);
                tally[1].fetch_add(u64::from(success), Ordering::Relaxed);
            }
            Op::Servers(n) if role.writes_fleet_size() => servers.record(n, &[]),
            Op::Servers(_) => {}
            Op::Http(..) => {
                if let Some(r) = op.http_request() {
                    http_server.record(r.duration_s(), &http_attributes(&r));
                }
            }
        }
    }
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    provider.shutdown().unwrap();
    text
}

fn assert_same(role: Role, bounds: Boundaries, ops: &[Op]) -> BTreeMap<String, Family> {
    let ours_text = ours(&role, &bounds, ops);
    let theirs_text = opentelemetry(&role, &bounds, ops);
    let (ours, theirs) = (parse(&ours_text), parse(&theirs_text));
    let names = |m: &BTreeMap<String, Family>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs), "families differ");
    for (name, theirs_family) in &theirs {
        let ours_family = &ours[name];
        assert_eq!(ours_family.kind, theirs_family.kind, "TYPE of {name}");
        assert_eq!(ours_family.help, theirs_family.help, "HELP of {name}");
        let series = |f: &Family| f.samples.keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            series(ours_family),
            series(theirs_family),
            "label sets of {name}"
        );
        assert_eq!(
            ours_family.samples, theirs_family.samples,
            "values of {name}"
        );
    }
    // Same families, same order, same number formatting: byte-identical.
    assert_eq!(ours_text, theirs_text);
    ours
}

fn value(families: &BTreeMap<String, Family>, sample: &str, extra: &[(&str, &str)]) -> f64 {
    let mut labels: BTreeMap<String, String> = BTreeMap::from([
        ("otel_scope_name".to_string(), SCOPE_NAME.to_string()),
        ("otel_scope_version".to_string(), SCOPE_VERSION.to_string()),
    ]);
    labels.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    families
        .values()
        .find_map(|f| f.samples.get(&(sample.to_string(), labels.clone())))
        .copied()
        .unwrap_or_else(|| panic!("no sample {sample} {labels:?}"))
}

#[test]
fn the_issue_sequence_from_the_orchestrator() {
    let families = assert_same(Role::orchestrator(), Boundaries::default(), SEQUENCE);
    // Guard against both sides being wrong the same way (or empty).
    assert_eq!(families.len(), 7, "{:?}", families.keys());
    let rollout = "gym_rollout_duration_ms_milliseconds";
    assert_eq!(value(&families, &format!("{rollout}_count"), &[]), 3.0);
    assert_eq!(value(&families, &format!("{rollout}_sum"), &[]), 48520.0);
    assert_eq!(
        value(&families, &format!("{rollout}_bucket"), &[("le", "5000")]),
        2.0
    );
    assert_eq!(value(&families, "gym_verify_success_rate", &[]), 0.75);
    assert_eq!(value(&families, "gym_servers_active", &[]), 4.0);
    let info = &families["target_info"];
    let (_, labels) = info.samples.keys().next().unwrap();
    assert_eq!(labels["service_name"], "nemo-gym/orchestrator");
    assert_eq!(labels["gym_role"], "orchestrator");
    assert_eq!(labels["nemo_gym_server_name"], "orchestrator");
    assert_eq!(labels["nemo_gym_server_type"], "orchestrator");
    assert_eq!(labels["nemo_gym_service_group"], "nemo-gym");
    assert_eq!(labels["nemo_run_id"], RUN_ID);
    assert_eq!(labels["telemetry_sdk_language"], "rust");
}

#[test]
fn a_server_has_no_fleet_size_family() {
    let role = Role::server("math-verifier-0", "resources");
    let families = assert_same(role, Boundaries::default(), SEQUENCE);
    assert!(!families.contains_key("gym_servers_active"));
    assert_eq!(families["target_info"].samples.len(), 1);
}

#[test]
fn custom_boundaries_and_values_on_a_bound() {
    let bounds = Boundaries::new(vec![0.5, 1.0, 2.5, 1e6]).unwrap();
    let ops = [
        Op::Rollout(0.5),
        Op::Rollout(1.0),
        Op::Rollout(0.75),
        Op::Rollout(2e6),
        Op::Verify(0.0, false),
        Op::Verify(2.5, true),
    ];
    let families = assert_same(Role::orchestrator(), bounds, &ops);
    let rollout = "gym_rollout_duration_ms_milliseconds_bucket";
    assert_eq!(value(&families, rollout, &[("le", "0.5")]), 1.0);
    assert_eq!(value(&families, rollout, &[("le", "1")]), 3.0);
    assert_eq!(value(&families, rollout, &[("le", "+Inf")]), 4.0);
    assert_eq!(value(&families, "gym_verify_success_rate", &[]), 0.5);
}

#[test]
fn before_any_verification_the_counters_read_zero_and_there_is_no_rate() {
    let families = assert_same(
        Role::orchestrator(),
        Boundaries::default(),
        &[Op::Rollout(10.0)],
    );
    assert!(!families.contains_key("gym_verify_success_rate"));
    assert_eq!(value(&families, "gym_verify_completed_total", &[]), 0.0);
    assert_eq!(value(&families, "gym_verify_succeeded_total", &[]), 0.0);
    assert!(families.contains_key("gym_rollout_duration_ms_milliseconds"));
    assert!(!families.contains_key("gym_verify_duration_ms_milliseconds"));
}

#[test]
fn nothing_recorded_is_target_info_and_zero_counters() {
    let families = assert_same(Role::orchestrator(), Boundaries::default(), &[]);
    assert_eq!(
        families.keys().collect::<Vec<_>>(),
        [
            "gym_verify_completed_total",
            "gym_verify_succeeded_total",
            "target_info"
        ]
    );
}

#[test]
fn all_failed_reads_a_zero_success_rate_and_succeeded_counter() {
    let ops = [Op::Verify(100.0, false), Op::Verify(300.0, false)];
    let families = assert_same(Role::server("s-0", "agent"), Boundaries::default(), &ops);
    assert_eq!(value(&families, "gym_verify_success_rate", &[]), 0.0);
    assert_eq!(value(&families, "gym_verify_succeeded_total", &[]), 0.0);
    assert_eq!(value(&families, "gym_verify_completed_total", &[]), 2.0);
}

#[test]
fn http_server_requests_by_route_method_and_status() {
    let role = Role::server("math-verifier-0", "resources");
    let families = assert_same(role, Boundaries::default(), HTTP_MIX);
    let family = &families["http_server_request_duration_seconds"];
    assert_eq!(family.kind, "histogram");
    assert_eq!(family.help, "Duration of HTTP server requests.");
    let count = "http_server_request_duration_seconds_count";
    let ok = [
        ("http_request_method", "POST"),
        ("http_response_status_code", "200"),
        ("http_route", "/verify"),
        ("url_scheme", "http"),
    ];
    assert_eq!(value(&families, count, &ok), 3.0);
    let bucket = "http_server_request_duration_seconds_bucket";
    let le = |v: &'static str| [ok.as_slice(), &[("le", v)]].concat();
    assert_eq!(value(&families, bucket, &le("0.005")), 2.0);
    assert_eq!(value(&families, bucket, &le("0.25")), 2.0);
    assert_eq!(value(&families, bucket, &le("0.5")), 3.0);
    let failed = [
        ("error_type", "500"),
        ("http_request_method", "POST"),
        ("http_response_status_code", "500"),
        ("http_route", "/verify"),
        ("url_scheme", "http"),
    ];
    assert_eq!(value(&families, count, &failed), 1.0);
    let no_response = [
        ("error_type", "_OTHER"),
        ("http_request_method", "POST"),
        ("http_route", "/verify"),
        ("url_scheme", "http"),
    ];
    assert_eq!(value(&families, count, &no_response), 1.0);
    let not_found = [
        ("http_request_method", "GET"),
        ("http_response_status_code", "404"),
        ("url_scheme", "http"),
    ];
    assert_eq!(value(&families, count, &not_found), 1.0);
    let odd = [
        ("http_request_method", "_OTHER"),
        ("http_response_status_code", "404"),
        ("url_scheme", "http"),
    ];
    assert_eq!(value(&families, count, &odd), 1.0);
    // 6 series x (15 buckets + sum + count).
    assert_eq!(family.samples.len(), 6 * 17);
}
