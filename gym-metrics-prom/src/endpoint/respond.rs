//! The answer to one HTTP request: the exposition at `/metrics`, the
//! fleet's service discovery at `/sd` (orchestrator only), 404 and 405
//! otherwise.

use std::io::Write;

use bytes::Bytes;
use http::header::{
    HeaderValue, ACCEPT, ACCEPT_ENCODING, ALLOW, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH,
    CONTENT_TYPE, VARY,
};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;

use super::negotiate::{accepts_gzip, negotiate, Format};
use super::renders::Renders;
use crate::handle::PrometheusHandle;

/// The `Content-Type` of the HTTP SD document.
const HTTP_SD_CONTENT_TYPE: &str = "application/json";

/// The scrape path.
pub(crate) const METRICS_PATH: &str = "/metrics";

/// Answers `request`, its exposition rendered afresh or shared through
/// `renders` (always afresh when `fresh`). Never fails: problems become a
/// status code.
pub(crate) fn respond<B>(
    handle: &PrometheusHandle,
    renders: &Renders,
    fresh: bool,
    request: &Request<B>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path();
    // Only the orchestrator's handle holds a target list.
    let sd = (path == SD_PATH)
        .then(|| handle.fleet_sd_document())
        .flatten();
    if path != METRICS_PATH && sd.is_none() {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: metrics are served at /metrics\n",
        );
    }
    let head = request.method() == Method::HEAD;
    if !head && request.method() != Method::GET {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: use GET or HEAD\n",
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if let Some(document) = sd {
        return respond_sd(document, head);
    }

    let header = |name| {
        request
            .headers()
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let (format, content_type) = negotiate(header(ACCEPT));
    let gzip_accepted = accepts_gzip(header(ACCEPT_ENCODING));
    let variant = format as usize * 2 + usize::from(gzip_accepted);
    let answer = renders.answer(variant, fresh, || {
        let body = match format {
            Format::OpenMetrics => handle.render_openmetrics().into_bytes(),
            Format::Text => handle.render().into_bytes(),
            Format::Protobuf => handle.render_protobuf(),
        };
        match gzip_accepted.then(|| gzip(&body)).flatten() {
            Some(compressed) => (compressed, true),
            None => (body, false),
        }
    });

    let length = answer.body.len();
    let mut response = Response::new(Full::new(if head { Bytes::new() } else { answer.body }));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(VARY, HeaderValue::from_static("Accept, Accept-Encoding"));
    if answer.gzipped {
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

fn gzip(body: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(body).ok()?;
    encoder.finish().ok()
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The service-discovery path.
pub(crate) const SD_PATH: &str = "/sd";

/// `document` (the published list, `[]` when empty) with 200, as JSON; no
/// body for `HEAD`. Not cached: the list changes as processes come and go.
pub(crate) fn respond_sd(document: Bytes, head: bool) -> Response<Full<Bytes>> {
    let length = document.len();
    let mut response = Response::new(Full::new(if head { Bytes::new() } else { document }));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(HTTP_SD_CONTENT_TYPE));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exposition::format::OPENMETRICS_0_0_1_CONTENT_TYPE;
    use crate::handle::{OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};
    use crate::PrometheusBuilder;
    use http_body_util::BodyExt;
    use std::io::Read;

    fn respond<B>(handle: &PrometheusHandle, request: &Request<B>) -> Response<Full<Bytes>> {
        super::respond(handle, &Renders::default(), false, request)
    }

    fn handle() -> PrometheusHandle {
        use gym_metrics_api::backend::Recorder;
        let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
        recorder.record_verify_ms(40.0, true);
        handle
    }

    fn body(r: Response<Full<Bytes>>) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(r.into_body().collect())
            .unwrap()
            .to_bytes()
            .to_vec()
    }

    fn request(method: Method, path: &str, headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    #[test]
    fn other_paths_404_other_methods_405() {
        let h = handle();
        let r = respond(&h, &request(Method::GET, "/", &[]));
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        assert!(!body(r).is_empty());
        let r = respond(&h, &request(Method::POST, "/metrics", &[]));
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.headers()[ALLOW], "GET, HEAD");
        assert!(!body(r).is_empty());
    }

    #[test]
    fn text_by_default_openmetrics_when_asked_gzip_when_accepted() {
        let h = handle();
        let r = respond(&h, &request(Method::GET, "/metrics", &[]));
        assert_eq!(r.headers()[CONTENT_TYPE], TEXT_CONTENT_TYPE);
        let text = String::from_utf8(body(r)).unwrap();
        assert!(
            text.contains("# TYPE gym_verify_completed_total counter"),
            "{text}"
        );

        let r = respond(
            &h,
            &request(
                Method::GET,
                "/metrics",
                &[
                    ("accept", "application/openmetrics-text; version=1.0.0"),
                    ("accept-encoding", "gzip"),
                ],
            ),
        );
        assert_eq!(r.headers()[CONTENT_TYPE], OPENMETRICS_CONTENT_TYPE);
        assert_eq!(r.headers()[CONTENT_ENCODING], "gzip");
        let mut om = String::new();
        flate2::read::GzDecoder::new(&body(r)[..])
            .read_to_string(&mut om)
            .unwrap();
        assert!(om.contains("# TYPE gym_verify_completed counter"), "{om}");
        assert!(om.ends_with("# EOF\n"));
    }

    #[test]
    fn openmetrics_0_0_1_is_labelled_0_0_1_with_the_same_text() {
        let h = handle();
        let ask = |accept| respond(&h, &request(Method::GET, "/metrics", &[("accept", accept)]));
        let old = ask("application/openmetrics-text; version=0.0.1");
        assert_eq!(old.headers()[CONTENT_TYPE], OPENMETRICS_0_0_1_CONTENT_TYPE);
        let new = ask("application/openmetrics-text; version=1.0.0");
        assert_eq!(new.headers()[CONTENT_TYPE], OPENMETRICS_CONTENT_TYPE);
        for r in [old, new] {
            let om = String::from_utf8(body(r)).unwrap();
            assert!(om.contains("# TYPE gym_verify_completed counter"), "{om}");
            assert!(om.ends_with("# EOF\n"), "{om}");
        }
    }

    #[test]
    fn sd_on_the_orchestrator_only_json_whole_list_empty_is_200() {
        use gym_metrics_api::backend::Recorder;
        use gym_metrics_api::{FleetTarget, Role};
        let (recorder, h) = PrometheusBuilder::new()
            .role(Role::orchestrator())
            .build()
            .unwrap();
        let r = respond(&h, &request(Method::GET, "/sd", &[]));
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
        assert_eq!(body(r), b"[]");

        let targets = [
            FleetTarget::of_process("127.0.0.1:1", &Role::orchestrator(), Some("r")).unwrap(),
            FleetTarget::of_process("127.0.0.1:2", &Role::server("s-0", "agent"), Some("r"))
                .unwrap(),
        ];
        recorder.publish_fleet_targets(&targets);
        // gzip is asked for and not used: the list is small and read rarely.
        let r = respond(
            &h,
            &request(Method::GET, "/sd", &[("accept-encoding", "gzip")]),
        );
        assert!(r.headers().get(CONTENT_ENCODING).is_none());
        let length = r.headers()[CONTENT_LENGTH].to_str().unwrap().to_string();
        let json = String::from_utf8(body(r)).unwrap();
        assert_eq!(length, json.len().to_string());
        assert_eq!(json, gym_metrics_api::FleetTarget::sd_json(&targets));

        let r = respond(&h, &request(Method::HEAD, "/sd", &[]));
        assert_eq!(r.status(), StatusCode::OK);
        assert!(body(r).is_empty());
        let r = respond(&h, &request(Method::POST, "/sd", &[]));
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);

        // A server's endpoint has no /sd.
        let r = respond(&handle(), &request(Method::GET, "/sd", &[]));
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn head_has_headers_and_no_body() {
        let h = handle();
        let r = respond(&h, &request(Method::HEAD, "/metrics", &[]));
        assert_eq!(r.status(), StatusCode::OK);
        let length: usize = r.headers()[CONTENT_LENGTH]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(length, h.render().len());
        assert!(body(r).is_empty());
    }
}
