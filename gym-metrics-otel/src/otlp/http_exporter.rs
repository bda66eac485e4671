//! OTLP/HTTP (features `http-proto` and `http-json`): a request POSTed on
//! our own blocking client ([`super::http_client`]), with or without TLS,
//! as protobuf or as OTLP/JSON.

use std::time::Duration;

use gym_metrics_kit::env::TlsEnv;
use http::header::CONTENT_TYPE;
use http::HeaderMap;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use prost::Message;

use super::Otlp;
use crate::BuildError;

/// Sends export requests to one OTLP/HTTP URL.
#[derive(Debug)]
pub(crate) struct HttpSender {
    client: reqwest::blocking::Client,
    url: String,
    headers: HeaderMap,
    json: bool,
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
        })
    }

    /// POSTs `request`; the collector's partial success, if any.
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
        let response = (self.client.post(&self.url))
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, content_type)
            .body(body)
            .send()
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let answer = response.bytes().unwrap_or_default();
        if !status.is_success() {
            let text = String::from_utf8_lossy(&answer[..answer.len().min(256)]).into_owned();
            return Err(format!("the collector answered {status}: {}", text.trim()));
        }
        let decoded = if self.json {
            serde_json::from_slice::<ExportMetricsServiceResponse>(&answer).ok()
        } else {
            ExportMetricsServiceResponse::decode(&answer[..]).ok()
        };
        Ok(decoded
            .and_then(|r| r.partial_success)
            .filter(|p| p.rejected_data_points > 0 || !p.error_message.is_empty())
            .map(|p| (p.rejected_data_points, p.error_message)))
    }
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
    crate::tls::ClientTls::load(tls)?.http_client(crate::collector_url::is_https(url), timeout)
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
