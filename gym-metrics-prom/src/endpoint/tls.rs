//! TLS for the endpoint (rustls on ring): the server configuration built from
//! the web configuration's files, and rebuilt when one of them changes, so a
//! rotated certificate needs no restart.
//!
//! Before each new connection the files' modification times and sizes are
//! compared with those last read (three `stat` calls); on a change they are
//! read again. A rotation that fails to load (a key not yet written beside
//! its new certificate) keeps the previous configuration and logs why, at
//! most once a minute, until the files load.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use super::shared::Shared;
use crate::web_config::{TlsSettings, WebConfigError};

/// What a file looked like when last read: a change of either means "read again".
type Stamp = Option<(SystemTime, u64)>;

/// The current TLS acceptor, and what its files looked like.
pub(crate) struct ReloadingAcceptor {
    settings: TlsSettings,
    stamps: Vec<Stamp>,
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for ReloadingAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReloadingAcceptor")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl ReloadingAcceptor {
    /// Reads the files at start-up: any problem is an error naming the file.
    pub(crate) fn load(settings: TlsSettings) -> Result<Self, WebConfigError> {
        let stamps = stamps(&settings);
        let acceptor = TlsAcceptor::from(Arc::new(server_config(&settings)?));
        Ok(Self {
            settings,
            stamps,
            acceptor,
        })
    }

    /// Whether every client must show a certificate the client CA signed.
    pub(crate) fn requires_client_certificates(&self) -> bool {
        self.settings.client_ca_file.is_some() && !self.settings.client_cert_optional
    }

    /// The acceptor for a new connection: rebuilt first if a file changed
    /// since it was last read.
    pub(crate) fn acceptor(&mut self, shared: &Shared) -> TlsAcceptor {
        let now = stamps(&self.settings);
        if now != self.stamps {
            match server_config(&self.settings) {
                Ok(config) => {
                    self.acceptor = TlsAcceptor::from(Arc::new(config));
                    self.stamps = now;
                    log::info!(target: "gym_metrics", "the metrics endpoint's TLS files changed: read them again ({})", self.settings.cert_file.display());
                }
                Err(e) => {
                    if let Some(held_back) = shared.log.admit("tls reload failed") {
                        log::warn!(target: "gym_metrics", "the metrics endpoint's TLS files changed but cannot be used: {e}; it keeps serving with the ones it read before ({held_back})");
                    }
                }
            }
        }
        self.acceptor.clone()
    }
}

fn stamps(settings: &TlsSettings) -> Vec<Stamp> {
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())))
    };
    let mut stamps = vec![stamp(&settings.cert_file), stamp(&settings.key_file)];
    if let Some(ca) = &settings.client_ca_file {
        stamps.push(stamp(ca));
    }
    stamps
}

/// The rustls server configuration `settings` describe, its files read now.
pub(crate) fn server_config(settings: &TlsSettings) -> Result<ServerConfig, WebConfigError> {
    let invalid = |key: &str, file: &Path, problem: String| WebConfigError::Invalid {
        file: settings.config_file.clone(),
        key: format!("tls_server_config.{key}"),
        problem: format!("{}: {problem}", file.display()),
    };
    let cert_file = &settings.cert_file;
    let key_file = &settings.key_file;
    let certs = read_certificates("cert_file", cert_file, settings)?;
    let key_pem = read("key_file", key_file)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        invalid(
            "key_file",
            key_file,
            format!("no usable private key ({e}); give a PEM PRIVATE KEY (PKCS#8, PKCS#1 or SEC1)"),
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    if settings.tls13 {
        versions.push(&rustls::version::TLS13);
    }
    if settings.tls12 {
        versions.push(&rustls::version::TLS12);
    }
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| invalid("min_version", cert_file, e.to_string()))?;
    let builder = match &settings.client_ca_file {
        None => builder.with_no_client_auth(),
        Some(ca_file) => {
            let mut roots = RootCertStore::empty();
            for cert in read_certificates("client_ca_file", ca_file, settings)? {
                roots.add(cert).map_err(|e| {
                    invalid(
                        "client_ca_file",
                        ca_file,
                        format!("not a usable CA certificate: {e}"),
                    )
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if settings.client_cert_optional {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier.build().map_err(|e| {
                invalid(
                    "client_ca_file",
                    ca_file,
                    format!("cannot verify clients with it: {e}"),
                )
            })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        invalid(
            "key_file",
            key_file,
            format!(
                "does not go with the certificate in {} ({e}); give the key the certificate was issued for",
                cert_file.display()
            ),
        )
    })?;
    // A scrape is HTTP/1.1.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

fn read(key: &str, file: &Path) -> Result<Vec<u8>, WebConfigError> {
    std::fs::read(file).map_err(|source| WebConfigError::Unreadable {
        what: format!("tls_server_config.{key}"),
        file: PathBuf::from(file),
        source,
    })
}

fn read_certificates(
    key: &str,
    file: &Path,
    settings: &TlsSettings,
) -> Result<Vec<CertificateDer<'static>>, WebConfigError> {
    let pem = read(key, file)?;
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&pem).collect();
    match certs {
        Ok(certs) if !certs.is_empty() => Ok(certs),
        Ok(_) => Err(WebConfigError::Invalid {
            file: settings.config_file.clone(),
            key: format!("tls_server_config.{key}"),
            problem: format!("{}: holds no PEM CERTIFICATE", file.display()),
        }),
        Err(e) => Err(WebConfigError::Invalid {
            file: settings.config_file.clone(),
            key: format!("tls_server_config.{key}"),
            problem: format!("{}: not PEM certificates ({e})", file.display()),
        }),
    }
}
