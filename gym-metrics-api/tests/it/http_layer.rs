//! Scenario: the tower layer records one bounded request per call into the
//! installed recorder: route templates (never raw paths), `_OTHER` methods,
//! 5xx and failed services as `error.type`, dropped requests too.
#![cfg(all(feature = "tower", not(feature = "off")))]

use std::future::Future;
use std::pin::pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{
    install, HttpMethod, HttpServerMetricsLayer, HttpServerRequest, Role, RouteTable, UrlScheme,
};
use tower::{service_fn, Layer, Service};

static SEEN: Mutex<Vec<HttpServerRequest>> = Mutex::new(Vec::new());

struct Capture(Role);
impl Recorder for Capture {
    fn role(&self) -> &Role {
        &self.0
    }
    fn record_rollout_duration_ms(&self, _: f64) {}
    fn record_verify_ms(&self, _: f64, _: bool) {}
    fn record_active_servers(&self, _: u64) {}
    fn record_http_server_request(&self, request: &HttpServerRequest) {
        SEEN.lock().unwrap().push(*request);
    }
}

/// A recorder written before the HTTP instrument existed: still compiles.
#[allow(dead_code)]
struct Old(Role);
impl Recorder for Old {
    fn role(&self) -> &Role {
        &self.0
    }
    fn record_rollout_duration_ms(&self, _: f64) {}
    fn record_verify_ms(&self, _: f64, _: bool) {}
    fn record_active_servers(&self, _: u64) {}
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn request(method: &str, target: &str) -> http::Request<()> {
    http::Request::builder()
        .method(method)
        .uri(target)
        .body(())
        .unwrap()
}

#[test]
fn every_request_is_recorded_with_bounded_attributes() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let _ = install(Capture(Role::server("s-0", "resources")));
    let routes = RouteTable::new(["/verify", "/tasks/{id}"]).unwrap();
    let mut service = HttpServerMetricsLayer::new(routes)
        .scheme(UrlScheme::Https)
        .layer(service_fn(|req: http::Request<()>| async move {
            let status = match req.uri().path() {
                "/verify" => 200,
                "/tasks/boom" => 500,
                "/tasks/err" => return Err("handler failed"),
                p if p.starts_with("/tasks/") => 204,
                _ => 404,
            };
            let mut response = http::Response::new(());
            *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
            Ok(response)
        }));

    block_on(service.call(request("POST", "/verify?user=alice"))).unwrap();
    block_on(service.call(request("GET", "/tasks/12345"))).unwrap();
    block_on(service.call(request("GET", "/tasks/boom"))).unwrap();
    assert!(block_on(service.call(request("GET", "/tasks/err"))).is_err());
    block_on(service.call(request("PURGE", "/secret/raw/path"))).unwrap();
    drop(service.call(request("GET", "/verify"))); // never polled: the client went away

    let seen: Vec<_> = SEEN
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.method(),
                r.route(),
                r.status_code(),
                r.error_type(),
                r.scheme(),
            )
        })
        .collect();
    use HttpMethod::*;
    let s = UrlScheme::Https;
    assert_eq!(
        seen,
        [
            (Post, Some("/verify"), Some(200), None, s),
            (Get, Some("/tasks/{id}"), Some(204), None, s),
            (Get, Some("/tasks/{id}"), Some(500), Some("500"), s),
            (Get, Some("/tasks/{id}"), None, Some("_OTHER"), s),
            (Other, None, Some(404), None, s),
            (Get, Some("/verify"), None, Some("_OTHER"), s),
        ]
    );
    assert!(SEEN
        .lock()
        .unwrap()
        .iter()
        .all(|r| r.duration_s() >= 0.0 && r.duration_s() < 5.0));
}

/// With `trace-context`, the service runs in the caller's trace once a
/// backend is installed; before, no header is read.
#[cfg(feature = "trace-context")]
#[test]
fn the_layer_runs_the_service_in_the_callers_trace_once_installed() {
    use opentelemetry::trace::TraceContextExt;
    if gym_testkit::ran_in_child() {
        return;
    }
    let mut service = HttpServerMetricsLayer::new(RouteTable::default()).layer(service_fn(
        |_: http::Request<()>| async {
            let current = opentelemetry::Context::current();
            let trace_id = current.span().span_context().trace_id().to_string();
            Ok::<_, std::convert::Infallible>(http::Response::new(trace_id))
        },
    ));
    let mut answer = || {
        let traced = http::Request::builder().header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        );
        block_on(service.call(traced.body(()).unwrap()))
            .unwrap()
            .into_body()
    };
    let invalid = opentelemetry::trace::TraceId::INVALID.to_string();
    assert_eq!(answer(), invalid, "nothing installed: no header read");
    let _ = install(Capture(Role::server("s-0", "resources")));
    assert_eq!(answer(), "4bf92f3577b34da6a3ce929d0e0e4736");
    let untraced = block_on(service.call(http::Request::new(()))).unwrap();
    assert_eq!(untraced.into_body(), invalid);
}
