//! The one PEM loader (feature `tls`) of the `/metrics` endpoint's TLS and
//! of OTLP's: a file read and parsed by rustls' own `rustls-pki-types` into
//! certificates (a chain, or CA roots) or a private key, each problem a
//! [`PemError`] saying what the file should have held. What the backends
//! build from them (a rustls server or client configuration, and the check
//! that a key matches its certificate) stays with rustls in the backends.

use std::path::Path;

use rustls_pki_types::pem::{self, PemObject};

use crate::file::read_bounded;

/// The largest PEM file read (a system CA bundle is about 200 KiB): a
/// larger one, or `/dev/zero`, is [`PemError::Unreadable`] saying so.
///
/// ```
/// use gym_metrics_kit::tls::{load_certificates, PemError, MOST_PEM_BYTES};
/// let e = load_certificates("/dev/zero".as_ref()).unwrap_err();
/// assert!(matches!(e, PemError::Unreadable(_)) && e.to_string().contains("more than"), "{e}");
/// ```
pub const MOST_PEM_BYTES: u64 = 4 << 20;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// A PEM file read and parsed: its text (for an API that takes PEM, such as
/// tonic's) and what it held.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let path = std::env::temp_dir().join(format!("kit-doc-pem-{}", std::process::id()));
/// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])?;
/// # std::fs::write(&path, cert.cert.pem())?;
/// let chain = gym_metrics_kit::tls::load_certificates(&path)?;
/// assert_eq!(chain.parsed.len(), 1);
/// assert!(chain.text.starts_with(b"-----BEGIN CERTIFICATE-----"));
/// # std::fs::remove_file(&path)?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Pem<T> {
    /// The file's bytes.
    pub text: Vec<u8>,
    /// What they parsed into.
    pub parsed: T,
}

/// A PEM file that cannot be used. `Display` says what was expected of it
/// ("expected a readable PEM file (…)"); the caller names the file and the
/// setting. Never holds the file's contents, so a key cannot leak.
///
/// ```
/// let e = gym_metrics_kit::tls::load_private_key("/nonexistent/key.pem".as_ref()).unwrap_err();
/// assert!(matches!(e, gym_metrics_kit::tls::PemError::Unreadable(_)));
/// assert!(e.to_string().starts_with("expected a readable PEM file"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("expected {}", self.expected())]
#[non_exhaustive]
pub enum PemError {
    /// The file cannot be read.
    Unreadable(#[source] std::io::Error),
    /// A certificate block does not parse.
    Certificates(#[source] pem::Error),
    /// No certificate block at all.
    NoCertificate,
    /// No private key that parses.
    PrivateKey(#[source] pem::Error),
}

impl PemError {
    /// What the file should have been, to follow "expected" in a message.
    ///
    /// ```
    /// let e = gym_metrics_kit::tls::PemError::NoCertificate;
    /// assert!(e.expected().contains("-----BEGIN CERTIFICATE-----"));
    /// ```
    pub fn expected(&self) -> String {
        match self {
            Self::Unreadable(e) => format!("a readable PEM file ({e})"),
            Self::Certificates(e) => format!("a PEM file of certificates ({e})"),
            Self::NoCertificate => {
                "a PEM file with at least one -----BEGIN CERTIFICATE----- block".to_string()
            }
            Self::PrivateKey(e) => {
                format!("a PEM file with a private key, PKCS#8, PKCS#1 or SEC1 ({e})")
            }
        }
    }
}

/// Every certificate in the PEM file at `path` (a chain, leaf first, or a
/// CA bundle); at least one.
///
/// # Errors
/// The file is unreadable, a certificate does not parse, or there is none.
///
/// ```
/// let dir = std::env::temp_dir();
/// let e = gym_metrics_kit::tls::load_certificates(&dir).unwrap_err(); // a directory
/// assert!(e.to_string().contains("readable"));
/// ```
pub fn load_certificates(path: &Path) -> Result<Pem<Vec<CertificateDer<'static>>>, PemError> {
    let text = read_bounded(path, MOST_PEM_BYTES).map_err(PemError::Unreadable)?;
    let parsed: Vec<_> = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<_, _>>()
        .map_err(PemError::Certificates)?;
    if parsed.is_empty() {
        return Err(PemError::NoCertificate);
    }
    Ok(Pem { text, parsed })
}

/// The private key in the PEM file at `path` (PKCS#8, PKCS#1 or SEC1).
///
/// # Errors
/// The file is unreadable or holds no private key.
///
/// ```
/// let e = gym_metrics_kit::tls::load_private_key("/nonexistent".as_ref()).unwrap_err();
/// assert!(e.to_string().contains("readable"));
/// ```
pub fn load_private_key(path: &Path) -> Result<Pem<PrivateKeyDer<'static>>, PemError> {
    let text = read_bounded(path, MOST_PEM_BYTES).map_err(PemError::Unreadable)?;
    let parsed = PrivateKeyDer::from_pem_slice(&text).map_err(PemError::PrivateKey)?;
    Ok(Pem { text, parsed })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(std::path::PathBuf);

    impl Dir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("kit-pem-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        fn file(&self, name: &str, text: &str) -> std::path::PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, text).unwrap();
            path
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_chain_and_its_key_load_and_each_file_is_told_apart() {
        let dir = Dir::new("load");
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let cert = dir.file("c.pem", &certified.cert.pem());
        let key = dir.file("k.pem", &certified.signing_key.serialize_pem());
        let garbage = dir.file("g.pem", "not pem\n");
        assert_eq!(load_certificates(&cert).unwrap().parsed.len(), 1);
        load_private_key(&key).unwrap();
        assert!(matches!(
            load_certificates(&key),
            Err(PemError::NoCertificate)
        ));
        assert!(matches!(
            load_certificates(&garbage),
            Err(PemError::NoCertificate)
        ));
        let e = load_private_key(&cert).unwrap_err();
        assert!(matches!(e, PemError::PrivateKey(_)), "{e}");
        assert!(e.to_string().contains("private key"), "{e}");
    }

    #[test]
    fn an_endless_file_is_read_only_to_the_bound() {
        let started = std::time::Instant::now();
        for e in [
            load_certificates(Path::new("/dev/zero")).unwrap_err(),
            load_private_key(Path::new("/dev/zero")).unwrap_err(),
        ] {
            assert!(
                matches!(&e, PemError::Unreadable(io) if io.kind() == std::io::ErrorKind::FileTooLarge),
                "{e}"
            );
            assert!(e.to_string().contains("more than"), "{e}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn a_broken_certificate_block_is_not_taken_for_none() {
        let dir = Dir::new("broken");
        let broken = dir.file(
            "b.pem",
            "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
        );
        let e = load_certificates(&broken).unwrap_err();
        assert!(matches!(e, PemError::Certificates(_)), "{e}");
    }
}
