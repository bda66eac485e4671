//! The blocking HTTP client of OTLP/HTTP (http/protobuf and http/json):
//! always ours, never the exporter's default one, because the default
//! follows up to ten redirects (issue 26). Ours follows none: a collector's
//! `3xx` is an export failure like any other status, logged once with its
//! status, and the payload with its headers (an `x-api-key`, an
//! `authorization`) is never re-posted to the address the redirect names;
//! a collector that redirects to itself costs one request per export.

use std::time::Duration;

use reqwest::blocking::{Client, ClientBuilder};
use reqwest::redirect::Policy;

use crate::BuildError;

/// A blocking client with `timeout` per request, following no redirect,
/// and whatever else `configure` sets (TLS). Built on a thread of its own,
/// as the exporter builds its default one: reqwest's blocking client must
/// not be made inside an async runtime.
///
/// # Errors
/// The thread cannot start, or reqwest rejects the configuration.
pub(crate) fn build(
    timeout: Duration,
    configure: impl FnOnce(ClientBuilder) -> ClientBuilder + Send + 'static,
) -> Result<Client, BuildError> {
    std::thread::Builder::new()
        .name("gym-metrics-otel-http-client".into())
        .spawn(move || {
            configure(Client::builder().timeout(timeout).redirect(Policy::none())).build()
        })
        .map_err(|e| {
            BuildError::Exporter(format!(
                "cannot start a thread to build the HTTP client: {e}"
            ))
        })?
        .join()
        .map_err(|_| BuildError::Exporter("the thread building the HTTP client panicked".into()))?
        .map_err(|e| BuildError::Exporter(format!("the HTTP client could not be built: {e}")))
}
