//! The TLS variables of the OTLP exporter,
//! `OTEL_EXPORTER_OTLP_[METRICS_]{CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY,INSECURE}`:
//! file paths and the gRPC `insecure` flag. Nothing is read from the files
//! here; a backend loads them when it starts (`crate::tls`, feature `tls`).

use std::path::PathBuf;

use crate::env::{parse_bool, Booleans, EnvVars};
use crate::ConfigError;

const METRICS_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE";
const CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";
const METRICS_CLIENT_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE";
const CLIENT_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE";
const METRICS_CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY";
const CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_CLIENT_KEY";
const METRICS_INSECURE: &str = "OTEL_EXPORTER_OTLP_METRICS_INSECURE";
const INSECURE: &str = "OTEL_EXPORTER_OTLP_INSECURE";

/// A PEM file, and the setting or variable that named it (for errors).
///
/// ```
/// let file = gym_metrics_kit::env::PemFile::new("certificate", "/etc/ca.pem");
/// assert_eq!((file.source, file.shown().as_str()), ("certificate", "/etc/ca.pem"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemFile {
    /// The builder setting or the variable the path came from.
    pub source: &'static str,
    /// The path as given.
    pub path: PathBuf,
}

impl PemFile {
    /// The file at `path`, named by `source`.
    ///
    /// ```
    /// let file = gym_metrics_kit::env::PemFile::new("client_key", "me.key");
    /// assert_eq!(file.path, std::path::Path::new("me.key"));
    /// ```
    pub fn new(source: &'static str, path: impl Into<PathBuf>) -> Self {
        Self {
            source,
            path: path.into(),
        }
    }

    /// The path as text, for error messages.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::env::PemFile::new("s", "a.pem").shown(), "a.pem");
    /// ```
    pub fn shown(&self) -> String {
        self.path.display().to_string()
    }
}

/// What the TLS variables (or a builder's TLS setters) say; all unset by
/// default: the platform's trust store, no client certificate, TLS for a
/// gRPC endpoint without a scheme. The `..._METRICS_...` variable wins over
/// the generic one, and a blank value counts as unset.
///
/// ```
/// use gym_metrics_kit::env::{EnvVars, PemFile, TlsEnv};
/// let vars = EnvVars::from_lookup(&TlsEnv::VARIABLES, |name| match name {
///     "OTEL_EXPORTER_OTLP_CERTIFICATE" => Some(" /ca.pem ".to_string()),
///     "OTEL_EXPORTER_OTLP_METRICS_INSECURE" => Some("TRUE".to_string()),
///     _ => None,
/// });
/// let tls = TlsEnv::read(&vars)?;
/// assert_eq!(tls.certificate, Some(PemFile::new("OTEL_EXPORTER_OTLP_CERTIFICATE", "/ca.pem")));
/// assert!(tls.insecure);
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsEnv {
    /// The CA bundle that replaces the platform's trust store.
    pub certificate: Option<PemFile>,
    /// The client certificate (chain) for mTLS.
    pub client_certificate: Option<PemFile>,
    /// The client certificate's private key.
    pub client_key: Option<PemFile>,
    /// gRPC only: plaintext for an endpoint given without a scheme.
    pub insecure: bool,
}

impl TlsEnv {
    /// Every variable [`TlsEnv::read`] reads.
    ///
    /// ```
    /// let names = gym_metrics_kit::env::TlsEnv::VARIABLES;
    /// assert!(names.contains(&"OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY"));
    /// ```
    pub const VARIABLES: [&'static str; 8] = [
        METRICS_CERTIFICATE,
        CERTIFICATE,
        METRICS_CLIENT_CERTIFICATE,
        CLIENT_CERTIFICATE,
        METRICS_CLIENT_KEY,
        CLIENT_KEY,
        METRICS_INSECURE,
        INSECURE,
    ];

    /// Reads the TLS variables from `vars`; the files are not read.
    ///
    /// # Errors
    /// `..._INSECURE` that is not `true` or `false`, naming the variable.
    ///
    /// ```
    /// use gym_metrics_kit::env::{EnvVars, TlsEnv};
    /// let vars = EnvVars::from_lookup(&TlsEnv::VARIABLES, |_| Some("maybe".to_string()));
    /// let e = TlsEnv::read(&vars).unwrap_err();
    /// assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_METRICS_INSECURE");
    /// ```
    pub fn read(vars: &EnvVars) -> Result<Self, ConfigError> {
        let file = |names: [&'static str; 2]| {
            vars.first(&names)
                .map(|(name, path)| PemFile::new(name, path.trim()))
        };
        let insecure = match vars.first(&[METRICS_INSECURE, INSECURE]) {
            None => false,
            Some((name, value)) => parse_bool(name, value, Booleans::OpenTelemetry)?,
        };
        Ok(Self {
            certificate: file([METRICS_CERTIFICATE, CERTIFICATE]),
            client_certificate: file([METRICS_CLIENT_CERTIFICATE, CLIENT_CERTIFICATE]),
            client_key: file([METRICS_CLIENT_KEY, CLIENT_KEY]),
            insecure,
        })
    }

    /// The settings that name a file, in a fixed order: CA bundle, client
    /// certificate, client key.
    ///
    /// ```
    /// use gym_metrics_kit::env::{PemFile, TlsEnv};
    /// let mut tls = TlsEnv::default();
    /// tls.client_key = Some(PemFile::new("client_key", "k.pem"));
    /// assert_eq!(tls.files().count(), 1);
    /// ```
    pub fn files(&self) -> impl Iterator<Item = &PemFile> {
        [
            &self.certificate,
            &self.client_certificate,
            &self.client_key,
        ]
        .into_iter()
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn from(vars: &[(&'static str, &str)]) -> Result<TlsEnv, ConfigError> {
        TlsEnv::read(&EnvVars::from_pairs(vars))
    }

    #[test]
    fn nothing_set_is_the_default() {
        assert_eq!(from(&[]).unwrap(), TlsEnv::default());
    }

    #[test]
    fn every_generic_variable_is_read_with_its_name() {
        let s = from(&[
            (CERTIFICATE, "/ca.pem"),
            (CLIENT_CERTIFICATE, " /me.pem "),
            (CLIENT_KEY, "/me.key"),
            (INSECURE, "TRUE"),
        ])
        .unwrap();
        assert_eq!(s.certificate, Some(PemFile::new(CERTIFICATE, "/ca.pem")));
        let cert = s.client_certificate.unwrap();
        assert_eq!(
            (cert.source, cert.path.as_path()),
            (CLIENT_CERTIFICATE, Path::new("/me.pem"))
        );
        assert_eq!(s.client_key, Some(PemFile::new(CLIENT_KEY, "/me.key")));
        assert!(s.insecure);
    }

    #[test]
    fn signal_specific_variables_win() {
        let s = from(&[
            (CERTIFICATE, "/generic-ca.pem"),
            (METRICS_CERTIFICATE, "/ca.pem"),
            (CLIENT_CERTIFICATE, "/generic.pem"),
            (METRICS_CLIENT_CERTIFICATE, "/me.pem"),
            (CLIENT_KEY, "/generic.key"),
            (METRICS_CLIENT_KEY, "/me.key"),
            (INSECURE, "true"),
            (METRICS_INSECURE, "false"),
        ])
        .unwrap();
        assert_eq!(
            s.certificate,
            Some(PemFile::new(METRICS_CERTIFICATE, "/ca.pem"))
        );
        assert_eq!(
            s.client_certificate,
            Some(PemFile::new(METRICS_CLIENT_CERTIFICATE, "/me.pem"))
        );
        assert_eq!(
            s.client_key,
            Some(PemFile::new(METRICS_CLIENT_KEY, "/me.key"))
        );
        assert!(!s.insecure);
    }

    #[test]
    fn empty_values_count_as_unset() {
        assert_eq!(
            from(&[(CERTIFICATE, " "), (INSECURE, "")]).unwrap(),
            TlsEnv::default()
        );
    }

    #[test]
    fn a_bad_insecure_names_the_variable_and_the_value() {
        for name in [METRICS_INSECURE, INSECURE] {
            let e = from(&[(name, "yes")]).unwrap_err();
            assert_eq!(e.variable(), name);
            assert!(e.to_string().contains("\"yes\""), "{e}");
        }
    }
}
