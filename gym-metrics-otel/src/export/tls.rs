//! TLS for OTLP (the `tls` feature, with at least one transport): the CA
//! bundle and the client identity loaded and checked once at start-up, and
//! the clients built from them: reqwest's blocking client on our rustls
//! `ClientConfig` for OTLP/HTTP, tonic's `ClientTlsConfig` for gRPC. Both
//! use rustls with the ring provider; without a CA bundle both trust the
//! platform's store (read by `rustls-native-certs`, which honours
//! `SSL_CERT_FILE` and `SSL_CERT_DIR`).

use std::sync::Arc;

use gym_metrics_kit::env::{PemFile, TlsEnv};
use gym_metrics_kit::tls::{load_certificates, load_private_key, Pem, PemError};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::{Error as TlsError, InconsistentKeys, RootCertStore};
#[cfg(feature = "grpc")]
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

#[cfg(any(feature = "http-proto", feature = "http-json"))]
use crate::export::otlp::http_client;
use crate::BuildError;
use crate::ConfigError;

/// The client side of TLS, every file read and checked.
pub(crate) struct ClientTls {
    /// The CA bundle (its PEM text and its certificates); `None`: the
    /// platform's trust store.
    ca: Option<(Vec<u8>, RootCertStore)>,
    identity: Option<ClientIdentity>,
}

/// A client certificate chain and the private key that matches it, each
/// as its PEM text (for tonic) and parsed (for rustls).
struct ClientIdentity {
    certificate: Pem<Vec<CertificateDer<'static>>>,
    key: Pem<PrivateKeyDer<'static>>,
}

impl ClientTls {
    /// Reads and checks every file the settings name.
    ///
    /// # Errors
    /// A file that is missing or unreadable, a CA bundle or client
    /// certificate file without a PEM certificate (or with one that does not
    /// parse), a key file without a PEM private key, a key of a type rustls
    /// cannot sign with, a key that does not match its certificate, or a
    /// client certificate without a key (or the other way round); each names
    /// the setting or variable and the path.
    pub(crate) fn load(settings: &TlsEnv) -> Result<Self, ConfigError> {
        let ca = match &settings.certificate {
            None => None,
            Some(file) => {
                let Pem { text: pem, parsed } = load(file, load_certificates)?;
                let mut roots = RootCertStore::empty();
                for certificate in parsed {
                    roots.add(certificate).map_err(|e| {
                        ConfigError::invalid(
                            file.source,
                            file.shown(),
                            format!("a CA bundle whose certificates parse as X.509 ({e})"),
                        )
                    })?;
                }
                Some((pem, roots))
            }
        };
        let identity = match (&settings.client_certificate, &settings.client_key) {
            (None, None) => None,
            (Some(certificate), Some(key)) => Some(identity(certificate, key)?),
            (Some(certificate), None) => {
                return Err(ConfigError::invalid(
                    certificate.source,
                    certificate.shown(),
                    "a client certificate together with its key: set OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_KEY \
                     (or the builder's client_key) too",
                ))
            }
            (None, Some(key)) => {
                return Err(ConfigError::invalid(
                    key.source,
                    key.shown(),
                    "a client key together with its certificate: set OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_CERTIFICATE \
                     (or the builder's client_certificate) too",
                ))
            }
        };
        Ok(Self { ca, identity })
    }

    /// The blocking HTTP client for OTLP/HTTP, with `timeout` per request,
    /// following no redirect (see [`crate::export::otlp::http_client`]).
    ///
    /// # Errors
    /// The platform's trust store is empty (for an `https` endpoint without
    /// a CA bundle), or reqwest rejects the configuration.
    #[cfg(any(feature = "http-proto", feature = "http-json"))]
    pub(crate) fn http_client(
        &self,
        https: bool,
        timeout: std::time::Duration,
    ) -> Result<reqwest::blocking::Client, BuildError> {
        let config = self.rustls_config(https)?;
        http_client::build(timeout, move |b| b.tls_backend_preconfigured(config))
    }

    /// tonic's TLS configuration for a gRPC `https` endpoint.
    #[cfg(feature = "grpc")]
    pub(crate) fn grpc_config(&self) -> ClientTlsConfig {
        let config = match &self.ca {
            Some((pem, _)) => ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)),
            None => ClientTlsConfig::new().with_native_roots(),
        };
        match &self.identity {
            Some(id) => config.identity(Identity::from_pem(&id.certificate.text, &id.key.text)),
            None => config,
        }
    }

    #[cfg(any(feature = "http-proto", feature = "http-json"))]
    fn rustls_config(&self, https: bool) -> Result<rustls::ClientConfig, BuildError> {
        let roots = match (&self.ca, https) {
            (Some((_, roots)), _) => roots.clone(),
            (None, true) => platform_roots()?,
            // Plain http: no handshake ever happens, so no store is read.
            (None, false) => RootCertStore::empty(),
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| BuildError::Exporter(format!("rustls: {e}")))?
            .with_root_certificates(roots);
        match &self.identity {
            None => Ok(builder.with_no_client_auth()),
            Some(id) => builder
                .with_client_auth_cert(id.certificate.parsed.clone(), id.key.parsed.clone_key())
                .map_err(|e| {
                    BuildError::Exporter(format!("rustls rejected the client certificate: {e}"))
                }),
        }
    }
}

/// The crypto provider of every rustls configuration here: ring, named
/// explicitly, so no process-wide default has to be installed.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}

/// Installs ring as the process's default rustls provider, unless the
/// application installed one already. Our own configurations never need it,
/// but this crate turns on reqwest's `rustls-no-provider` and Cargo unifies
/// features: every other reqwest client of the same build (the application's
/// own, or `opentelemetry-otlp`'s default HTTP client) would otherwise panic
/// at construction looking for a process default. Called when the backend is
/// built. Only where reqwest is (OTLP/HTTP).
#[cfg(any(feature = "http-proto", feature = "http-json"))]
pub(crate) fn install_process_default_provider() {
    if CryptoProvider::get_default().is_none() {
        // Another thread may have won the race: its provider stands.
        let _ = ring::default_provider().install_default();
    }
}

/// The platform's trust store.
#[cfg(any(feature = "http-proto", feature = "http-json"))]
fn platform_roots() -> Result<RootCertStore, ConfigError> {
    let mut roots = RootCertStore::empty();
    let (added, _ignored) =
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if added == 0 {
        return Err(ConfigError::invalid(
            "OTEL_EXPORTER_OTLP_[METRICS_]CERTIFICATE",
            "",
            "a CA bundle: the platform's trust store holds no usable certificate \
             (install the ca-certificates package, set SSL_CERT_FILE, or name a bundle)",
        ));
    }
    Ok(roots)
}

/// What `loader` makes of `file`, or an error naming the setting and the path.
fn load<T>(
    file: &PemFile,
    loader: fn(&std::path::Path) -> Result<Pem<T>, PemError>,
) -> Result<Pem<T>, ConfigError> {
    loader(&file.path).map_err(|e| ConfigError::invalid(file.source, file.shown(), e.expected()))
}

fn identity(certificate_file: &PemFile, key_file: &PemFile) -> Result<ClientIdentity, ConfigError> {
    let certificate = load(certificate_file, load_certificates)?;
    let key = load(key_file, load_private_key)?;
    let checked = CertifiedKey::from_der(
        certificate.parsed.clone(),
        key.parsed.clone_key(),
        &provider(),
    );
    match checked {
        Ok(_) => Ok(ClientIdentity { certificate, key }),
        Err(TlsError::InconsistentKeys(InconsistentKeys::KeyMismatch)) => {
            Err(ConfigError::invalid(
                key_file.source,
                key_file.shown(),
                format!(
                    "the private key of the certificate in {}={}: this key does not match it",
                    certificate_file.source,
                    certificate_file.shown()
                ),
            ))
        }
        Err(e) => Err(ConfigError::invalid(
            key_file.source,
            key_file.shown(),
            format!("a key rustls can sign with, ECDSA P-256/P-384, Ed25519 or RSA ({e})"),
        )),
    }
}
