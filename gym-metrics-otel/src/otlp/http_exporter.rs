//! OTLP/HTTP (features `http-proto` and `http-json`): the exporter on our
//! own blocking client ([`super::http_client`]), with or without TLS.

use std::collections::HashMap;
use std::time::Duration;

use gym_metrics_kit::env::TlsEnv;
use http::HeaderMap;
use opentelemetry_otlp::{MetricExporter, Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::Temporality;

use super::Otlp;
use crate::BuildError;

/// The OTLP/HTTP exporter to `url`, with `encoding`'s bodies.
pub(super) fn exporter(
    encoding: Protocol,
    url: &str,
    headers: &HeaderMap,
    otlp: &Otlp,
    temporality: Temporality,
) -> Result<MetricExporter, BuildError> {
    let headers: HashMap<String, String> = headers
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let builder = MetricExporter::builder()
        .with_http()
        .with_protocol(encoding)
        .with_endpoint(url)
        .with_timeout(otlp.timeout)
        .with_headers(headers)
        .with_temporality(temporality);
    Ok(builder
        .with_http_client(client(&otlp.tls, url, otlp.timeout)?)
        .build()?)
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
