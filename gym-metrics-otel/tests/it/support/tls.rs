//! TLS for the tests: a private CA and certificates made here by rcgen
//! (written to a temp dir removed on drop), and a real rustls TLS server: a
//! terminator on 127.0.0.1 that completes the handshake (optionally demanding
//! a client certificate through rustls' `WebPkiClientVerifier`) and pipes the
//! plaintext to a receiver that cannot serve TLS itself (rotel's gRPC port,
//! VictoriaMetrics' plain port, the fake collector).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// Every file the TLS tests need, made fresh for each test.
pub struct Pki {
    dir: PathBuf,
    /// Our CA: trusted by the exporter (and, for mTLS, by the server).
    pub ca: PathBuf,
    /// A server certificate for 127.0.0.1 and localhost, signed by our CA.
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    /// A client certificate signed by our CA, and its key.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// A valid private key of another certificate (not the client's).
    pub other_key: PathBuf,
    /// A server certificate for 127.0.0.1 signed by a CA nobody trusts.
    pub untrusted_server_cert: PathBuf,
    pub untrusted_server_key: PathBuf,
    /// A server certificate for 127.0.0.1 by our CA that expired in 2020.
    pub expired_server_cert: PathBuf,
    pub expired_server_key: PathBuf,
    /// A client certificate signed by the untrusted CA, and its key.
    pub foreign_client_cert: PathBuf,
    pub foreign_client_key: PathBuf,
}

fn ca(name: &str) -> (Issuer<'static, KeyPair>, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let pem = params.self_signed(&key).unwrap().pem();
    (Issuer::new(params, key), pem)
}

fn leaf(
    issuer: &Issuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
    expired: bool,
) -> (String, String) {
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, names[0]);
    params.extended_key_usages = vec![usage];
    if expired {
        params.not_before = rcgen::date_time_ymd(2019, 1, 1);
        params.not_after = rcgen::date_time_ymd(2020, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    pub fn new(test: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "gym-otel-tls-{test}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let (ours, ours_pem) = ca("gym test CA");
        let (theirs, _) = ca("untrusted test CA");
        let server = ["127.0.0.1", "localhost"];
        let (server_cert, server_key) =
            leaf(&ours, &server, ExtendedKeyUsagePurpose::ServerAuth, false);
        let (client_cert, client_key) = leaf(
            &ours,
            &["gym-client"],
            ExtendedKeyUsagePurpose::ClientAuth,
            false,
        );
        let (_, other_key) = leaf(
            &ours,
            &["other"],
            ExtendedKeyUsagePurpose::ClientAuth,
            false,
        );
        let (untrusted_cert, untrusted_key) =
            leaf(&theirs, &server, ExtendedKeyUsagePurpose::ServerAuth, false);
        let (expired_cert, expired_key) =
            leaf(&ours, &server, ExtendedKeyUsagePurpose::ServerAuth, true);
        let (foreign_cert, foreign_key) = leaf(
            &theirs,
            &["intruder"],
            ExtendedKeyUsagePurpose::ClientAuth,
            false,
        );
        Self {
            ca: write("ca.pem", &ours_pem),
            server_cert: write("server.pem", &server_cert),
            server_key: write("server.key", &server_key),
            client_cert: write("client.pem", &client_cert),
            client_key: write("client.key", &client_key),
            other_key: write("other.key", &other_key),
            untrusted_server_cert: write("untrusted-server.pem", &untrusted_cert),
            untrusted_server_key: write("untrusted-server.key", &untrusted_key),
            expired_server_cert: write("expired-server.pem", &expired_cert),
            expired_server_key: write("expired-server.key", &expired_key),
            foreign_client_cert: write("foreign-client.pem", &foreign_cert),
            foreign_client_key: write("foreign-client.key", &foreign_key),
            dir,
        }
    }

    /// A file in the PKI's directory with `text` in it.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A rustls TLS server on 127.0.0.1 piping each connection's plaintext to
/// `forward_to`; ALPN `h2` and `http/1.1`, so gRPC and OTLP/HTTP both pass.
/// Stopped (its runtime and every connection dropped) on drop.
pub struct TlsTerminator {
    port: u16,
    handshakes_ok: Arc<AtomicUsize>,
    handshakes_failed: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TlsTerminator {
    /// Serves `cert`/`key`; with `client_ca`, demands a client certificate
    /// signed by it.
    pub fn start(
        cert: &Path,
        key: &Path,
        client_ca: Option<&Path>,
        forward_to: SocketAddr,
    ) -> Self {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(key).unwrap();
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap();
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for c in CertificateDer::pem_file_iter(ca).unwrap() {
                    roots.add(c.unwrap()).unwrap();
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .unwrap();
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder.with_single_cert(chain, key).unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let handshakes_ok = Arc::new(AtomicUsize::new(0));
        let handshakes_failed = Arc::new(AtomicUsize::new(0));
        let (stop, stopped) = oneshot::channel::<()>();
        let (ok, failed) = (handshakes_ok.clone(), handshakes_failed.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.spawn(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        continue;
                    };
                    let (acceptor, ok, failed) = (acceptor.clone(), ok.clone(), failed.clone());
                    tokio::spawn(async move {
                        let mut tls = match acceptor.accept(tcp).await {
                            Ok(tls) => tls,
                            Err(_) => {
                                failed.fetch_add(1, Ordering::SeqCst);
                                return;
                            }
                        };
                        ok.fetch_add(1, Ordering::SeqCst);
                        if let Ok(mut plain) = TcpStream::connect(forward_to).await {
                            let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                        }
                    });
                }
            });
            let _ = runtime.block_on(stopped);
        });
        Self {
            port,
            handshakes_ok,
            handshakes_failed,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Handshakes completed (by both sides, as far as the server knows).
    pub fn handshakes_ok(&self) -> usize {
        self.handshakes_ok.load(Ordering::SeqCst)
    }

    /// Handshakes that failed (e.g. the client rejected our certificate).
    pub fn handshakes_failed(&self) -> usize {
        self.handshakes_failed.load(Ordering::SeqCst)
    }
}

impl Drop for TlsTerminator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `host:port` of a URL such as `http://127.0.0.1:4318/v1/metrics`.
pub fn socket_of(url: &str) -> SocketAddr {
    let rest = url.split("://").nth(1).unwrap();
    rest.split('/').next().unwrap().parse().unwrap()
}
