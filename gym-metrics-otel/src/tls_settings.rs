//! The TLS settings of the OTLP exporter, as given (builder setters or
//! `OTEL_EXPORTER_OTLP_[METRICS_]{CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY,INSECURE}`):
//! file paths and the gRPC `insecure` flag. Nothing is read here; the files
//! are loaded and checked when the pipeline starts (`crate::tls`).

use std::path::PathBuf;

use crate::ConfigError;

/// A PEM file, and the setting or variable that named it (for errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PemFile {
    /// The builder setting or the variable the path came from.
    pub(crate) source: &'static str,
    /// The path as given.
    pub(crate) path: PathBuf,
}

impl PemFile {
    pub(crate) fn new(source: &'static str, path: impl Into<PathBuf>) -> Self {
        Self {
            source,
            path: path.into(),
        }
    }

    /// The path as text, for error messages.
    pub(crate) fn shown(&self) -> String {
        self.path.display().to_string()
    }
}

/// What the TLS settings say; all unset by default (the platform's trust
/// store, no client certificate, TLS for a gRPC endpoint without a scheme).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    /// The CA bundle that replaces the platform's trust store.
    pub(crate) certificate: Option<PemFile>,
    /// The client certificate (chain) for mTLS.
    pub(crate) client_certificate: Option<PemFile>,
    /// The client certificate's private key.
    pub(crate) client_key: Option<PemFile>,
    /// gRPC only: plaintext for an endpoint given without a scheme.
    pub(crate) insecure: bool,
}

impl TlsSettings {
    /// The settings that name a file, in a fixed order.
    pub(crate) fn files(&self) -> impl Iterator<Item = &PemFile> {
        [
            &self.certificate,
            &self.client_certificate,
            &self.client_key,
        ]
        .into_iter()
        .flatten()
    }

    /// In a build without the `tls` feature: an error naming the first file
    /// setting given, which such a build cannot honour.
    ///
    /// # Errors
    /// Any file setting is given.
    #[cfg_attr(feature = "tls", allow(dead_code))]
    pub(crate) fn reject_without_tls(&self) -> Result<(), ConfigError> {
        match self.files().next() {
            None => Ok(()),
            Some(file) => Err(ConfigError::invalid(
                file.source,
                file.shown(),
                "no TLS file in this build: gym-metrics-otel was built without its `tls` feature; \
                 enable it (it is on by default) or unset the variable",
            )),
        }
    }
}
