//! OTLP/HTTP (features `http-proto` and `http-json`): a request POSTed on
//! our own blocking client ([`super::http_client`]), with or without TLS,
//! as protobuf or as OTLP/JSON, gzipped when asked; retryable answers are
//! retried by [`super::retry`] within the export timeout.

use std::io::{Read, Write};
use std::time::{Duration, SystemTime};

use gym_metrics_kit::env::TlsEnv;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE, RETRY_AFTER};
use http::HeaderMap;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use prost::Message;

use super::retry::{self, Attempt};
use super::Otlp;
use crate::settings::exporter_env::Compression;
use crate::BuildError;

/// Sends export requests to one OTLP/HTTP URL.
#[derive(Debug)]
pub(crate) struct HttpSender {
    client: reqwest::blocking::Client,
    url: String,
    headers: HeaderMap,
    json: bool,
    compression: Compression,
    /// The whole export's timeout, retries included.
    timeout: Duration,
}

impl HttpSender {
    /// A sender to `url` with `headers`, of JSON bodies when `json`.
    pub(super) fn new(
        json: bool,
        url: &str,
        headers: HeaderMap,
        otlp: &Otlp,
    ) -> Result<Self, BuildError> {
        Ok(Self {
            client: client(&otlp.tls, url, otlp.timeout)?,
            url: url.to_string(),
            headers,
            json,
            compression: otlp.compression,
            timeout: otlp.timeout,
        })
    }

    /// POSTs `request`, retrying a retryable answer within the timeout; the
    /// collector's partial success, if any.
    pub(crate) fn send(
        &self,
        request: &ExportMetricsServiceRequest,
    ) -> Result<Option<(i64, String)>, String> {
        let (content_type, body) = if self.json {
            let body = serde_json::to_vec(request).map_err(|e| format!("encoding JSON: {e}"))?;
            ("application/json", body)
        } else {
            ("application/x-protobuf", request.encode_to_vec())
        };
        let body = match self.compression {
            Compression::None => body,
            Compression::Gzip => gzip(&body).map_err(|e| format!("gzipping the body: {e}"))?,
        };
        retry::run(self.timeout, |left| self.attempt(content_type, &body, left))
    }

    /// One POST of `body`, given `left` of the export's timeout.
    fn attempt(
        &self,
        content_type: &'static str,
        body: &[u8],
        left: Duration,
    ) -> Attempt<Option<(i64, String)>> {
        let mut post = (self.client.post(&self.url))
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, content_type)
            .timeout(left)
            .body(body.to_vec());
        if self.compression == Compression::Gzip {
            post = post.header(CONTENT_ENCODING, "gzip");
        }
        let response = match post.send() {
            Ok(response) => response,
            Err(e) => return Attempt::Failed(e.to_string()),
        };
        let status = response.status();
        let server_delay = (response.headers().get(RETRY_AFTER))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry::parse_retry_after(v, SystemTime::now()));
        // Read to a bound: a hostile collector's endless answer holds no memory.
        let mut answer = Vec::new();
        let _ = response.take(MAX_ANSWER_BYTES).read_to_end(&mut answer);
        if !status.is_success() {
            let text = String::from_utf8_lossy(&answer[..answer.len().min(256)]).into_owned();
            let error = format!("the collector answered {status}: {}", text.trim());
            return if retry::http_status_retryable(status.as_u16()) {
                Attempt::Retryable {
                    error,
                    server_delay,
                }
            } else {
                Attempt::Failed(error)
            };
        }
        let partial = if self.json {
            json_partial_success(&answer)
        } else {
            (ExportMetricsServiceResponse::decode(&answer[..]).ok())
                .and_then(|r| r.partial_success)
                .map(|p| (p.rejected_data_points, p.error_message))
        };
        Attempt::Accepted(partial)
    }
}

/// The most of a collector's answer read: its partial success, or the
/// start of its error, is far smaller.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// The partial success of an OTLP/JSON answer, whose `rejectedDataPoints`
/// is an int64, so a string in proto3 JSON (as the Go collector writes it),
/// or a number.
fn json_partial_success(answer: &[u8]) -> Option<(i64, String)> {
    let answer: serde_json::Value = serde_json::from_slice(answer).ok()?;
    let partial = answer.get("partialSuccess")?;
    let rejected = match partial.get("rejectedDataPoints") {
        Some(serde_json::Value::String(s)) => s.parse().ok()?,
        Some(n) => n.as_i64()?,
        None => 0,
    };
    let message = partial
        .get("errorMessage")
        .and_then(|m| m.as_str())
        .unwrap_or_default();
    Some((rejected, message.to_string()))
}

/// `body` gzipped (`Content-Encoding: gzip`).
fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    let out = Vec::with_capacity(body.len() / 4 + 64);
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    encoder.write_all(body)?;
    encoder.finish()
}

/// OTLP/HTTP's client: ours, following no redirect (see
/// [`super::http_client`]), on rustls with the TLS files loaded and checked
/// (also for `http://`: reqwest is built without a crypto provider of its
/// own).
#[cfg(feature = "tls")]
fn client(
    tls: &TlsEnv,
    url: &str,
    timeout: Duration,
) -> Result<reqwest::blocking::Client, BuildError> {
    crate::export::tls::ClientTls::load(tls)?
        .http_client(crate::settings::collector_url::is_https(url), timeout)
}

/// Without the `tls` feature: our plain client, following no redirect (see
/// [`super::http_client`]), and no TLS file.
#[cfg(not(feature = "tls"))]
fn client(
    tls: &TlsEnv,
    _url: &str,
    timeout: Duration,
) -> Result<reqwest::blocking::Client, BuildError> {
    super::reject_without_tls(tls)?;
    super::http_client::build(timeout, |b| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_partial_success_is_read_with_its_count_as_a_string_or_a_number() {
        let go = br#"{"partialSuccess":{"rejectedDataPoints":"5","errorMessage":"x"}}"#;
        assert_eq!(json_partial_success(go), Some((5, "x".to_string())));
        let plain = br#"{"partialSuccess":{"rejectedDataPoints":3}}"#;
        assert_eq!(json_partial_success(plain), Some((3, String::new())));
        assert_eq!(json_partial_success(b"{}"), None);
        assert_eq!(json_partial_success(b"not json"), None);
    }
}
