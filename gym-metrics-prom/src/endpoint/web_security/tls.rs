//! TLS for the endpoint (rustls on ring): the server configuration built from
//! the web configuration's files, and rebuilt when one of them changes, so a
//! rotated certificate needs no restart.
//!
//! Before each new connection the files' modification times and sizes are
//! compared with those last read (three `stat` calls); on a change they are
//! read again. A rotation that fails to load (a key not yet written beside
//! its new certificate) keeps the previous configuration and logs why, at
//! most once a minute, until the files load.
//!
//! Files that load but are weak are served with a warning, logged once
//! when they are read (at start-up, and after each change): a private key
//! readable by group or others, a server certificate outside its validity
//! period, or a CA certificate (`basicConstraints CA:true`) served as the
//! server's own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use gym_metrics_kit::tls::{load_certificates, load_private_key, Pem, PemError};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use super::web_config::{TlsSettings, WebConfigError};
use crate::endpoint::endpoint_state::Shared;

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
        log_weaknesses(&settings);
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
                    log_weaknesses(&self.settings);
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

/// Logs each of [`weaknesses`] as a warning.
fn log_weaknesses(settings: &TlsSettings) {
    for weakness in weaknesses(settings) {
        log::warn!(target: "gym_metrics", "the metrics endpoint's TLS (web configuration {}): {weakness}", settings.config_file.display());
    }
}

/// What is weak in `settings`' files that load: one sentence each, naming
/// the file and what to do (never their contents).
pub(crate) fn weaknesses(settings: &TlsSettings) -> Vec<String> {
    let mut found = Vec::new();
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(&settings.key_file) {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            found.push(format!(
                "tls_server_config.key_file {} is readable by group or others (mode {mode:03o}): a private key should be readable by its owner only; chmod 600 it",
                settings.key_file.display()
            ));
        }
    }
    let leaf = load_certificates(&settings.cert_file)
        .ok()
        .and_then(|pem| pem.parsed.into_iter().next());
    if let Some(leaf) = leaf {
        if let Ok((_, cert)) = x509_parser::parse_x509_certificate(leaf.as_ref()) {
            let cert_file = settings.cert_file.display();
            let validity = cert.validity();
            let now = x509_parser::time::ASN1Time::now();
            if now > validity.not_after {
                found.push(format!("tls_server_config.cert_file {cert_file}: the server certificate expired on {}; scrapers that check it refuse it: renew it", validity.not_after));
            } else if now < validity.not_before {
                found.push(format!("tls_server_config.cert_file {cert_file}: the server certificate is not valid before {}; scrapers that check it refuse it until then: check the clock or the certificate", validity.not_before));
            }
            if cert.is_ca() {
                found.push(format!("tls_server_config.cert_file {cert_file}: the server certificate is a CA certificate (basicConstraints CA:true); serve a leaf certificate the CA signed, not the CA itself"));
            }
        }
    }
    found
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
    let certs = load("cert_file", cert_file, settings, load_certificates)?;
    let key = load("key_file", key_file, settings, load_private_key)?;
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
            for cert in load("client_ca_file", ca_file, settings, load_certificates)? {
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

/// What `loader` makes of `file` (the value of `tls_server_config.<key>`),
/// or an error naming the key and the file.
fn load<T>(
    key: &str,
    file: &Path,
    settings: &TlsSettings,
    loader: fn(&Path) -> Result<Pem<T>, PemError>,
) -> Result<T, WebConfigError> {
    match loader(file) {
        Ok(pem) => Ok(pem.parsed),
        Err(PemError::Unreadable(source)) => Err(WebConfigError::Unreadable {
            what: format!(
                "tls_server_config.{key} of {}",
                settings.config_file.display()
            ),
            file: PathBuf::from(file),
            source,
        }),
        Err(e) => Err(WebConfigError::Invalid {
            file: settings.config_file.clone(),
            key: format!("tls_server_config.{key}"),
            problem: format!("{}: {e}", file.display()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::connections::limits::Limits;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    use rustls::pki_types::ServerName;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::TlsConnector;

    struct Ca {
        der: CertificateDer<'static>,
        pem: String,
        issuer: Issuer<'static, KeyPair>,
    }

    fn ca() -> Ca {
        let mut params = CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca {
            der: cert.der().clone(),
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A leaf for `localhost`: its chain and key, as DER and as PEM.
    fn leaf(
        ca: &Ca,
    ) -> (
        CertificateDer<'static>,
        PrivateKeyDer<'static>,
        String,
        String,
    ) {
        let params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca.issuer).unwrap();
        let key_der = PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        (cert.der().clone(), key_der, cert.pem(), key.serialize_pem())
    }

    struct Files(PathBuf);

    impl Drop for Files {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Settings over freshly written files: a server certificate from
    /// `server_ca`, and `client_ca` as the client CA when given.
    fn settings(name: &str, server_ca: &Ca, client_ca: Option<&Ca>) -> (TlsSettings, Files) {
        let dir = std::env::temp_dir().join(format!("gym-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (_, _, cert, key) = leaf(server_ca);
        std::fs::write(dir.join("s.crt"), cert).unwrap();
        std::fs::write(dir.join("s.key"), key).unwrap();
        let client_ca_file = client_ca.map(|ca| {
            std::fs::write(dir.join("ca.crt"), &ca.pem).unwrap();
            dir.join("ca.crt")
        });
        let settings = TlsSettings {
            config_file: dir.join("web.yml"),
            cert_file: dir.join("s.crt"),
            key_file: dir.join("s.key"),
            client_ca_file,
            client_cert_optional: false,
            tls12: true,
            tls13: true,
        };
        (settings, Files(dir))
    }

    fn client(
        trusted: &Ca,
        identity: Option<(CertificateDer<'static>, PrivateKeyDer<'static>)>,
        tls12_only: bool,
    ) -> rustls::ClientConfig {
        let mut roots = RootCertStore::empty();
        roots.add(trusted.der.clone()).unwrap();
        let versions: &[&'static rustls::SupportedProtocolVersion] = if tls12_only {
            &[&rustls::version::TLS12]
        } else {
            &[&rustls::version::TLS13, &rustls::version::TLS12]
        };
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
        match identity {
            Some((cert, key)) => builder.with_client_auth_cert(vec![cert], key).unwrap(),
            None => builder.with_no_client_auth(),
        }
    }

    /// A handshake over an in-memory pipe: whether the server side and the
    /// client side each succeeded. Each end's result is its own verdict:
    /// under TLS 1.3 a client finishes before the server has checked it.
    /// Both are held until both ends are done (the server writes session
    /// tickets).
    fn handshake(server: TlsAcceptor, client: rustls::ClientConfig) -> (bool, bool) {
        let connector = TlsConnector::from(Arc::new(client));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (a, b) = tokio::io::duplex(64 * 1024);
            let name = ServerName::try_from("localhost").unwrap();
            let (accepted, connected) = tokio::join!(server.accept(a), connector.connect(name, b));
            (accepted.is_ok(), connected.is_ok())
        })
    }

    /// Whether the server side of a handshake succeeds.
    fn server_accepts(server: &TlsSettings, client: rustls::ClientConfig) -> bool {
        let server = TlsAcceptor::from(Arc::new(server_config(server).unwrap()));
        handshake(server, client).0
    }

    #[test]
    fn a_required_client_certificate_must_come_from_the_client_ca() {
        let (server_ca, client_ca, stranger) = (ca(), ca(), ca());
        let (s, _files) = settings("require", &server_ca, Some(&client_ca));
        let (good_cert, good_key, _, _) = leaf(&client_ca);
        let (bad_cert, bad_key, _, _) = leaf(&stranger);
        assert!(server_accepts(
            &s,
            client(
                &server_ca,
                Some((good_cert.clone(), good_key.clone_key())),
                false
            )
        ));
        assert!(
            !server_accepts(&s, client(&server_ca, None, false)),
            "no certificate"
        );
        assert!(
            !server_accepts(&s, client(&server_ca, Some((bad_cert, bad_key)), false)),
            "untrusted"
        );
        // The same over TLS 1.2.
        assert!(server_accepts(
            &s,
            client(&server_ca, Some((good_cert, good_key)), true)
        ));
    }

    #[test]
    fn verify_if_given_lets_a_client_without_one_in_but_not_a_stranger() {
        let (server_ca, client_ca, stranger) = (ca(), ca(), ca());
        let (mut s, _files) = settings("if-given", &server_ca, Some(&client_ca));
        s.client_cert_optional = true;
        let (bad_cert, bad_key, _, _) = leaf(&stranger);
        assert!(server_accepts(&s, client(&server_ca, None, false)));
        assert!(!server_accepts(
            &s,
            client(&server_ca, Some((bad_cert, bad_key)), false)
        ));
    }

    #[test]
    fn min_version_tls13_refuses_a_tls12_client() {
        let server_ca = ca();
        let (mut s, _files) = settings("tls13", &server_ca, None);
        assert!(server_accepts(&s, client(&server_ca, None, true)));
        s.tls12 = false;
        assert!(!server_accepts(&s, client(&server_ca, None, true)));
        assert!(server_accepts(&s, client(&server_ca, None, false)));
    }

    #[test]
    fn changed_files_are_read_again_and_a_broken_change_keeps_the_old_ones() {
        let (ca1, ca2) = (ca(), ca());
        let (s, files) = settings("reload", &ca1, None);
        let shared = Shared::new(Limits::for_descriptor_limit(64));
        let mut reloading = ReloadingAcceptor::load(s.clone()).unwrap();
        // The client's verdict: does it trust the certificate served?
        let handshake = |acceptor: TlsAcceptor, trusted: &Ca| {
            handshake(acceptor, client(trusted, None, false)).1
        };
        assert!(handshake(reloading.acceptor(&shared), &ca1));
        // Half a rotation (a new certificate, the old key): kept the old pair.
        let (_, _, cert2, key2) = leaf(&ca2);
        std::fs::write(files.0.join("s.crt"), &cert2).unwrap();
        assert!(handshake(reloading.acceptor(&shared), &ca1));
        // The rotation completed: the new pair from the next connection on.
        std::fs::write(files.0.join("s.key"), &key2).unwrap();
        assert!(handshake(reloading.acceptor(&shared), &ca2));
        assert!(!handshake(reloading.acceptor(&shared), &ca1));
    }

    #[test]
    fn weak_files_are_named_in_warnings_and_sound_ones_are_not() {
        use std::os::unix::fs::PermissionsExt as _;
        let server_ca = ca();
        let (s, files) = settings("weak", &server_ca, None);
        std::fs::set_permissions(&s.key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(weaknesses(&s), Vec::<String>::new());

        std::fs::set_permissions(&s.key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let found = weaknesses(&s).join("\n");
        assert!(
            found.contains("readable by group or others (mode 644)") && found.contains("s.key"),
            "{found}"
        );

        std::fs::set_permissions(&s.key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
        std::fs::write(
            &s.cert_file,
            params.signed_by(&key, &server_ca.issuer).unwrap().pem(),
        )
        .unwrap();
        std::fs::write(&s.key_file, key.serialize_pem()).unwrap();
        server_config(&s).unwrap();
        let found = weaknesses(&s).join("\n");
        assert!(
            found.contains("expired") && found.contains("s.crt"),
            "{found}"
        );

        params.not_before = rcgen::date_time_ymd(2990, 1, 1);
        params.not_after = rcgen::date_time_ymd(2991, 1, 1);
        std::fs::write(
            &s.cert_file,
            params.signed_by(&key, &server_ca.issuer).unwrap().pem(),
        )
        .unwrap();
        assert!(weaknesses(&s).join("\n").contains("not valid before"));

        // The CA's own certificate served as the server's.
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        std::fs::write(&s.cert_file, params.self_signed(&key).unwrap().pem()).unwrap();
        server_config(&s).unwrap();
        let found = weaknesses(&s);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("CA certificate"), "{found:?}");
        // Never a file's contents.
        assert!(!found[0].contains("BEGIN"));
        drop(files);
    }
}
