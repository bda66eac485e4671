//! Reading the standard TLS variables of the OTLP exporter, for
//! [`crate::OtelBuilder::from_env`]; the signal-specific `..._METRICS_...`
//! variable wins over the generic one, and an empty value counts as unset.

use crate::tls_settings::{PemFile, TlsSettings};
use crate::ConfigError;

pub(crate) const METRICS_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE";
pub(crate) const CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";
pub(crate) const METRICS_CLIENT_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE";
pub(crate) const CLIENT_CERTIFICATE: &str = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE";
pub(crate) const METRICS_CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY";
pub(crate) const CLIENT_KEY: &str = "OTEL_EXPORTER_OTLP_CLIENT_KEY";
pub(crate) const METRICS_INSECURE: &str = "OTEL_EXPORTER_OTLP_METRICS_INSECURE";
pub(crate) const INSECURE: &str = "OTEL_EXPORTER_OTLP_INSECURE";

/// Every TLS variable, as listed in [`crate::ENV_VARIABLES`].
pub(crate) const TLS_ENV_VARIABLES: [&str; 8] = [
    METRICS_CERTIFICATE,
    CERTIFICATE,
    METRICS_CLIENT_CERTIFICATE,
    CLIENT_CERTIFICATE,
    METRICS_CLIENT_KEY,
    CLIENT_KEY,
    METRICS_INSECURE,
    INSECURE,
];

/// The TLS settings the variables give; the files are not read here.
///
/// # Errors
/// `..._INSECURE` that is not `true` or `false`, naming the variable.
pub(crate) fn read_tls(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<TlsSettings, ConfigError> {
    let get = |name: &'static str| {
        lookup(name)
            .filter(|v| !v.trim().is_empty())
            .map(|v| (name, v))
    };
    let first = |specific: &'static str, generic: &'static str| get(specific).or(get(generic));
    let file = |specific, generic| {
        first(specific, generic).map(|(name, path)| PemFile::new(name, path.trim()))
    };
    let insecure = match first(METRICS_INSECURE, INSECURE) {
        None => false,
        Some((name, v)) => match v.trim().to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => return Err(ConfigError::invalid(name, v, "true or false")),
        },
    };
    Ok(TlsSettings {
        certificate: file(METRICS_CERTIFICATE, CERTIFICATE),
        client_certificate: file(METRICS_CLIENT_CERTIFICATE, CLIENT_CERTIFICATE),
        client_key: file(METRICS_CLIENT_KEY, CLIENT_KEY),
        insecure,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    fn from(vars: &[(&str, &str)]) -> Result<TlsSettings, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        read_tls(|name| map.get(name).cloned())
    }

    #[test]
    fn nothing_set_is_the_default() {
        assert_eq!(from(&[]).unwrap(), TlsSettings::default());
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
            TlsSettings::default()
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
