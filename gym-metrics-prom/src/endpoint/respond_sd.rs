//! The answer to `GET /sd` on the orchestrator's endpoint: the fleet's
//! scrape targets as Prometheus HTTP service discovery, the whole list every
//! time.

use bytes::Bytes;
/// The `Content-Type` of the HTTP SD document.
const HTTP_SD_CONTENT_TYPE: &str = "application/json";
use http::header::{HeaderValue, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use http::Response;
use http_body_util::Full;

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
