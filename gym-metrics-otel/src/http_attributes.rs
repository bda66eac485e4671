//! The attributes of one `http.server.request.duration` data point.

use gym_metrics_api::HttpServerRequest;
use opentelemetry::KeyValue;

/// The semantic conventions' attributes of `request`: every value a
/// `&'static str` (no allocation for the strings), the status an integer,
/// absent attributes left out.
pub(crate) fn http_attributes(request: &HttpServerRequest) -> Vec<KeyValue> {
    let mut kv = Vec::with_capacity(5);
    kv.push(KeyValue::new(
        "http.request.method",
        request.method().as_str(),
    ));
    kv.push(KeyValue::new("url.scheme", request.scheme().as_str()));
    if let Some(route) = request.route() {
        kv.push(KeyValue::new("http.route", route));
    }
    if let Some(status) = request.status_code() {
        kv.push(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    if let Some(error) = request.error_type() {
        kv.push(KeyValue::new("error.type", error));
    }
    kv
}

/// The attributes the old HTTP conventions give `http.server.duration`
/// (as OpenTelemetry's Python instrumentations write them): `http.method`,
/// `http.scheme`, `http.status_code` as an integer, and `http.target`
/// holding the route template; `error.type` has no old twin.
pub(crate) fn http_old_attributes(request: &HttpServerRequest) -> Vec<KeyValue> {
    let mut kv = Vec::with_capacity(4);
    kv.push(KeyValue::new("http.method", request.method().as_str()));
    kv.push(KeyValue::new("http.scheme", request.scheme().as_str()));
    if let Some(route) = request.route() {
        kv.push(KeyValue::new("http.target", route));
    }
    if let Some(status) = request.status_code() {
        kv.push(KeyValue::new("http.status_code", i64::from(status)));
    }
    kv
}

#[cfg(test)]
mod tests {
    use super::*;
    use gym_metrics_api::{HttpMethod, UrlScheme};
    use opentelemetry::Value;

    #[test]
    fn a_failed_request_carries_every_attribute_and_an_integer_status() {
        let r = HttpServerRequest::new(
            HttpMethod::Post,
            Some("/verify"),
            UrlScheme::Http,
            Some(503),
            std::time::Duration::from_millis(3),
        );
        let kv = http_attributes(&r);
        let get = |k: &str| {
            kv.iter()
                .find(|kv| kv.key.as_str() == k)
                .map(|kv| kv.value.clone())
        };
        assert_eq!(get("http.response.status_code"), Some(Value::I64(503)));
        assert_eq!(get("error.type"), Some(Value::from("503")));
        assert_eq!(get("http.route"), Some(Value::from("/verify")));
        assert_eq!(kv.len(), 5);
        let ok = HttpServerRequest::new(
            HttpMethod::Get,
            None,
            UrlScheme::Https,
            Some(404),
            Default::default(),
        );
        assert_eq!(http_attributes(&ok).len(), 3);
    }
}
