//! The web configuration file of the `/metrics` endpoint, in the format of
//! Prometheus' exporter-toolkit (the `--web.config.file` of node_exporter and
//! Prometheus itself): TLS and basic-auth users, read and checked whole at
//! start-up so that a mistake stops the process there, naming the key or file.
//!
//! Supported keys (any other key is an error naming it):
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt          # PEM: the certificate chain, leaf first
//!   key_file: server.key           # PEM: its private key (PKCS#8, PKCS#1 or SEC1)
//!   client_ca_file: clients-ca.crt # PEM: CAs that sign client certificates
//!   client_auth_type: RequireAndVerifyClientCert # or NoClientCert, VerifyClientCertIfGiven
//!   min_version: TLS12             # TLS12 (default), TLS13 (TLS10, TLS11: refused)
//!   max_version: TLS13             # TLS12, TLS13 (default)
//! basic_auth_users:
//!   prometheus: $2y$10$...         # bcrypt hash of the password
//! ```
//!
//! Relative file names are taken from the configuration file's directory, as
//! exporter-toolkit does.
//!
//! Beyond exporter-toolkit's checks, these are refused, as each would do
//! other than the file seems to ask without a word:
//!
//! - `min_version: TLS10` or `TLS11`: rustls speaks TLS 1.2 and 1.3 only, so
//!   the lowest version supported is TLS12.
//! - A user named twice in `basic_auth_users` (YAML would keep one of the
//!   two hashes, unsaid).
//! - A file that configures nothing (empty, only comments, or neither
//!   `tls_server_config` nor a user): the file is named to protect
//!   `/metrics`, and such a file would serve it in the clear to anyone; to
//!   serve it so on purpose, name no file.
//!
//! A user name holding `':'` is refused without being shown: it may be a
//! `user:password` pair. bcrypt reads at most 72 bytes of a password, so a
//! password over 72 bytes is refused at every login (a hash cannot tell its
//! password's length, so this cannot be checked here): use at most 72.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::WEB_CONFIG_FILE_VAR;

/// The web configuration file could not be used: the message names the file
/// and, where one is at fault, the key.
///
/// ```
/// let e = gym_metrics_prom::PrometheusBuilder::new()
///     .web_config_file("/nonexistent/web.yml")
///     .with_http_listener(([127, 0, 0, 1], 0))
///     .install()
///     .unwrap_err();
/// assert!(e.to_string().contains("/nonexistent/web.yml"), "{e}");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebConfigError {
    /// A file (the configuration itself, or one it names) cannot be read.
    #[error("cannot read {what} {file:?}: {source}; check that it exists and that this process may read it")]
    Unreadable {
        /// What the file is: the web configuration file (named by
        /// `GYM_METRICS_WEB_CONFIG_FILE` or the builder), or the key of
        /// one naming it.
        what: String,
        /// The file.
        file: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The file is not YAML of the expected shape (an unknown key, a value
    /// of the wrong type): serde's message names the key.
    #[error("web configuration file {file:?}: {message}; the keys supported are tls_server_config (cert_file, key_file, client_ca_file, client_auth_type, min_version, max_version) and basic_auth_users")]
    Syntax {
        /// The file.
        file: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// The file configures nothing (it is empty, only comments, or names
    /// neither `tls_server_config` nor a user): `/metrics` would be served
    /// over plain HTTP to anyone, which is not what naming the file asks for.
    #[error("web configuration file {file:?} configures nothing (neither tls_server_config nor basic_auth_users), so /metrics would be served over plain HTTP without auth: add tls_server_config and/or basic_auth_users, or, to serve /metrics so on purpose, name no web configuration file ({WEB_CONFIG_FILE_VAR}, PrometheusBuilder::web_config_file)")]
    ConfiguresNothing {
        /// The file.
        file: PathBuf,
    },
    /// A key's value cannot be used.
    #[error("web configuration file {file:?}: {key}: {problem}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The key at fault, as a path (`tls_server_config.key_file`,
        /// `basic_auth_users.alice`).
        key: String,
        /// What is wrong and what to do (secrets are never shown).
        problem: String,
    },
}

/// How the server treats client certificates (exporter-toolkit's names,
/// which are Go's `tls.ClientAuthType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) enum ClientAuthType {
    /// No client certificate is asked for.
    NoClientCert,
    /// Asked for, not verified: refused here (it authenticates nobody).
    RequestClientCert,
    /// Required, not verified: refused here (it authenticates nobody).
    RequireAnyClientCert,
    /// Verified against `client_ca_file` when the client sends one.
    VerifyClientCertIfGiven,
    /// Required, and verified against `client_ca_file`.
    RequireAndVerifyClientCert,
}

/// A TLS protocol version as exporter-toolkit names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub(crate) enum TlsVersion {
    TLS10,
    TLS11,
    TLS12,
    TLS13,
}

/// The checked TLS settings: files resolved against the configuration's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    /// The configuration file, for the messages of later errors.
    pub(crate) config_file: PathBuf,
    pub(crate) cert_file: PathBuf,
    pub(crate) key_file: PathBuf,
    /// Set exactly when client certificates are verified.
    pub(crate) client_ca_file: Option<PathBuf>,
    /// `VerifyClientCertIfGiven`: a client without a certificate is let in.
    pub(crate) client_cert_optional: bool,
    /// TLS 1.2 is offered (rustls speaks only 1.2 and 1.3: a minimum of 1.0
    /// or 1.1 is refused).
    pub(crate) tls12: bool,
    pub(crate) tls13: bool,
}

/// The checked contents of a web configuration file: what the endpoint
/// serves by, and what a scraper's configuration must match (a launcher
/// writing a Prometheus scrape configuration reads it here, so the format is
/// parsed in one place).
///
/// ```
/// let dir = std::env::temp_dir().join(format!("gym-web-summary-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = dir.join("web.yml");
/// std::fs::write(&file, "basic_auth_users:\n  prom: $2b$04$Iy/3Dv6K6x1ZuUrg9ZbVPe4Ci6BH9BEF.HZn4r/ZcF1FEI0Ymv3Zm\n")?;
/// let web = gym_metrics_prom::WebConfig::load(&file)?;
/// assert_eq!(web.tls_cert_file(), None);
/// assert_eq!(web.basic_auth_users().collect::<Vec<_>>(), ["prom"]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    pub(crate) tls: Option<TlsSettings>,
    /// User name to bcrypt hash; empty: no basic auth.
    pub(crate) basic_auth_users: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileContents {
    tls_server_config: Option<TlsServerConfig>,
    #[serde(default)]
    basic_auth_users: UserEntries,
}

/// `basic_auth_users` as written: every entry, in file order. A map would
/// keep only the last of a name given twice (serde_norway checks duplicate
/// keys only for its own `Mapping`), so the duplicate could not be refused.
#[derive(Debug, Default)]
struct UserEntries(Vec<(String, String)>);

/// What is wrong with the `entry`th user (from 1, in file order), whose
/// name holds ':': the name is not shown, as it may be `user:password`.
fn colon_in_user_name(entry: usize) -> String {
    format!("user {entry} (in file order) has a name holding ':', which the Authorization header uses to separate user and password, so no client could log in as it; the name is not shown, as it may be a user:password pair: rename the user (and if what follows ':' is a password, change it)")
}

impl<'de> Deserialize<'de> for UserEntries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = UserEntries;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of user names to bcrypt hashes")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UserEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(user) = map.next_key::<String>()? {
                    let hash = match map.next_value() {
                        Ok(hash) => hash,
                        // serde's message names the key (its path): not this one.
                        Err(_) if user.contains(':') => {
                            let problem = colon_in_user_name(entries.len() + 1);
                            let message =
                                format!("{problem}; its value is not a bcrypt hash either");
                            return Err(serde::de::Error::custom(message));
                        }
                        Err(e) => return Err(e),
                    };
                    entries.push((user, hash));
                }
                Ok(UserEntries(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsServerConfig {
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_ca_file: Option<PathBuf>,
    client_auth_type: Option<ClientAuthType>,
    min_version: Option<TlsVersion>,
    max_version: Option<TlsVersion>,
}

impl WebConfig {
    /// Reads and checks `file` (the files it names are read later, by the
    /// endpoint's TLS set-up, still at start-up).
    ///
    /// # Errors
    /// [`WebConfigError`] naming the file, and the key at fault if any.
    ///
    /// ```
    /// let e = gym_metrics_prom::WebConfig::load(std::path::Path::new("/nonexistent/web.yml")).unwrap_err();
    /// assert!(e.to_string().contains("/nonexistent/web.yml"));
    /// ```
    pub fn load(file: &Path) -> Result<Self, WebConfigError> {
        let unreadable = |source| {
            WebConfigError::Unreadable {
            what: format!("the web configuration file ({WEB_CONFIG_FILE_VAR}, PrometheusBuilder::web_config_file)"),
            file: file.to_path_buf(),
            source,
        }
        };
        // Never more than the bound (`/dev/zero` is not read for ever).
        let text =
            gym_metrics_kit::file::read_bounded(file, MOST_CONFIG_BYTES).map_err(unreadable)?;
        let text = String::from_utf8(text).map_err(|_| WebConfigError::Syntax {
            file: file.to_path_buf(),
            message: "not UTF-8 text".into(),
        })?;
        Self::parse(file, &text)
    }

    /// The server certificate file (resolved against the configuration's
    /// directory) when the endpoint serves TLS.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("gym-web-cert-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let file = dir.join("web.yml");
    /// std::fs::write(&file, "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n")?;
    /// let web = gym_metrics_prom::WebConfig::load(&file)?;
    /// assert_eq!(web.tls_cert_file(), Some(dir.join("s.crt").as_path()));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tls_cert_file(&self) -> Option<&Path> {
        self.tls.as_ref().map(|t| t.cert_file.as_path())
    }

    /// The basic-auth user names, sorted (their hashes are not handed out).
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("gym-web-users-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let file = dir.join("web.yml");
    /// std::fs::write(&file, "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n")?;
    /// let web = gym_metrics_prom::WebConfig::load(&file)?;
    /// assert_eq!(web.basic_auth_users().count(), 0);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn basic_auth_users(&self) -> impl Iterator<Item = &str> {
        self.basic_auth_users.keys().map(String::as_str)
    }

    /// Checks `text`, the contents of `file`.
    pub(crate) fn parse(file: &Path, text: &str) -> Result<Self, WebConfigError> {
        if let Some(depth) = flow_depth_over(text, MOST_NESTING) {
            return Err(WebConfigError::Syntax {
                file: file.to_path_buf(),
                message: format!("brackets nested {depth} deep, more than the {MOST_NESTING} a web configuration may use"),
            });
        }
        // An empty file (or only comments) is `None`: refused below.
        let contents: Option<FileContents> =
            serde_norway::from_str(text).map_err(|e| WebConfigError::Syntax {
                file: file.to_path_buf(),
                message: redact_strings(&e.to_string()),
            })?;
        let contents = contents.unwrap_or(FileContents {
            tls_server_config: None,
            basic_auth_users: UserEntries::default(),
        });
        let invalid = |key: &str, problem: &str| WebConfigError::Invalid {
            file: file.to_path_buf(),
            key: key.to_string(),
            problem: problem.to_string(),
        };
        let mut basic_auth_users = BTreeMap::new();
        for (entry, (user, hash)) in contents.basic_auth_users.0.into_iter().enumerate() {
            if user.contains(':') {
                // `alice:hunter2` is likely a password: no part of it is shown.
                return Err(invalid("basic_auth_users", &colon_in_user_name(entry + 1)));
            }
            let key = format!("basic_auth_users.{user}");
            if basic_auth_users.contains_key(&user) {
                return Err(invalid(&key, "the user is given twice, and YAML would keep one of the two hashes without a word: keep one entry per user"));
            }
            let Ok(parts) = hash.parse::<bcrypt::HashParts>() else {
                return Err(invalid(&key, "not a bcrypt hash (expected $2a$, $2b$ or $2y$, a cost and 53 characters; make one with `htpasswd -nBC 10 \"\" | tr -d ':\\n'` or Python's bcrypt.hashpw)"));
            };
            let cost = parts.get_cost();
            if cost > MOST_BCRYPT_COST {
                return Err(invalid(&key, &format!("bcrypt cost {cost} is above {MOST_BCRYPT_COST}: each check would take seconds to hours (cost 31: days at start-up); hash the password again at cost 10 to 12")));
            }
            basic_auth_users.insert(user, hash);
        }
        if contents.tls_server_config.is_none() && basic_auth_users.is_empty() {
            return Err(WebConfigError::ConfiguresNothing {
                file: file.to_path_buf(),
            });
        }
        let directory = file.parent().unwrap_or_else(|| Path::new(""));
        let tls = contents
            .tls_server_config
            .map(|tls| tls_settings(file, directory, tls))
            .transpose()?;
        Ok(Self {
            tls,
            basic_auth_users,
        })
    }
}

/// The largest web configuration file read (a real one is a few hundred
/// bytes; a larger file is an error naming it).
pub(crate) const MOST_CONFIG_BYTES: u64 = 1 << 20;

/// The deepest nesting of `[` and `{` a web configuration may use (it
/// needs none): deeper is refused before YAML parsing, which takes seconds
/// over 100,000 of them.
pub(crate) const MOST_NESTING: usize = 32;

/// The highest bcrypt cost accepted: 16 takes seconds per check (each
/// step up doubles it), and 31 would take days.
pub(crate) const MOST_BCRYPT_COST: u32 = 16;

/// The depth of `[`/`{` nesting in `text`, if over `most` (counted over
/// every character, quoted or not: over-counting only refuses a file that
/// has no business holding so many brackets).
fn flow_depth_over(text: &str, most: usize) -> Option<usize> {
    let mut depth = 0usize;
    for b in text.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > most {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// `message` with every quoted string value serde shows (`string "…"`)
/// replaced: a value put where a map belongs may be a hash or a password.
fn redact_strings(message: &str) -> String {
    const MARK: &str = "string \"";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        out.push_str("a string (not shown)");
        let after = &rest[at + MARK.len()..];
        let mut escaped = false;
        let end = after
            .char_indices()
            .find(|&(_, c)| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
            .map_or(after.len(), |(i, _)| i + 1);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn tls_settings(
    file: &Path,
    directory: &Path,
    tls: TlsServerConfig,
) -> Result<TlsSettings, WebConfigError> {
    let invalid = |key: &str, problem: &str| WebConfigError::Invalid {
        file: file.to_path_buf(),
        key: format!("tls_server_config.{key}"),
        problem: problem.to_string(),
    };
    let resolve = |p: PathBuf| directory.join(p);
    let cert_file = tls
        .cert_file
        .ok_or_else(|| invalid("cert_file", "missing: name the server's certificate (PEM)"))?;
    let key_file = tls
        .key_file
        .ok_or_else(|| invalid("key_file", "missing: name the server's private key (PEM)"))?;
    let client_auth = match (tls.client_auth_type, &tls.client_ca_file) {
        // exporter-toolkit's default once a client CA is given.
        (None, Some(_)) => ClientAuthType::RequireAndVerifyClientCert,
        (None, None) => ClientAuthType::NoClientCert,
        (Some(t), _) => t,
    };
    let client_cert_optional = match client_auth {
        ClientAuthType::NoClientCert => {
            if tls.client_ca_file.is_some() {
                return Err(invalid("client_ca_file", "set, but client_auth_type is NoClientCert, so it would never be used: set client_auth_type to RequireAndVerifyClientCert or remove client_ca_file"));
            }
            false
        }
        ClientAuthType::RequestClientCert | ClientAuthType::RequireAnyClientCert => {
            return Err(invalid("client_auth_type", "RequestClientCert and RequireAnyClientCert accept any certificate without verifying it, which authenticates nobody, and are not supported: use RequireAndVerifyClientCert (or VerifyClientCertIfGiven) with client_ca_file"));
        }
        ClientAuthType::VerifyClientCertIfGiven | ClientAuthType::RequireAndVerifyClientCert => {
            if tls.client_ca_file.is_none() {
                return Err(invalid("client_ca_file", "missing: client_auth_type verifies client certificates, so name the CA file (PEM) that signs them"));
            }
            client_auth == ClientAuthType::VerifyClientCertIfGiven
        }
    };
    let min = tls.min_version.unwrap_or(TlsVersion::TLS12);
    let max = tls.max_version.unwrap_or(TlsVersion::TLS13);
    if min < TlsVersion::TLS12 {
        return Err(invalid(
            "min_version",
            &format!("{min:?} is below TLS12, the lowest version this endpoint supports (rustls speaks TLS 1.2 and 1.3 only): use TLS12 (the default) or TLS13"),
        ));
    }
    if max < TlsVersion::TLS12 {
        return Err(invalid(
            "max_version",
            "below TLS12: this endpoint speaks TLS 1.2 and 1.3 only (rustls); use TLS12 or TLS13",
        ));
    }
    if min > max {
        return Err(invalid(
            "min_version",
            "above max_version: no version would be left; lower min_version or raise max_version",
        ));
    }
    Ok(TlsSettings {
        config_file: file.to_path_buf(),
        cert_file: resolve(cert_file),
        key_file: resolve(key_file),
        client_ca_file: tls.client_ca_file.map(resolve),
        client_cert_optional,
        tls12: min <= TlsVersion::TLS12,
        tls13: max >= TlsVersion::TLS13,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // "secret", cost 4 (fast to check).
    const HASH: &str = "$2b$04$Iy/3Dv6K6x1ZuUrg9ZbVPe4Ci6BH9BEF.HZn4r/ZcF1FEI0Ymv3Zm";

    fn parse(text: &str) -> Result<WebConfig, WebConfigError> {
        WebConfig::parse(Path::new("/etc/gym/web.yml"), text)
    }

    #[test]
    fn the_documented_keys_are_read_and_files_resolved_beside_the_config() {
        let c = parse(&format!(
            "tls_server_config:\n  cert_file: s.crt\n  key_file: /abs/s.key\n  client_ca_file: ca.crt\n  min_version: TLS13\nbasic_auth_users:\n  prom: '{HASH}'\n"
        ))
        .unwrap();
        let tls = c.tls.unwrap();
        assert_eq!(tls.cert_file, Path::new("/etc/gym/s.crt"));
        assert_eq!(tls.key_file, Path::new("/abs/s.key"));
        assert_eq!(
            tls.client_ca_file.as_deref(),
            Some(Path::new("/etc/gym/ca.crt"))
        );
        assert!(
            !tls.client_cert_optional,
            "a client CA alone requires client certificates"
        );
        assert!(!tls.tls12 && tls.tls13);
        assert_eq!(c.basic_auth_users["prom"], HASH);
    }

    #[test]
    fn a_file_that_configures_nothing_is_refused_naming_it() {
        for text in [
            "",
            "# nothing yet\n",
            "---\n",
            "tls_server_config:\nbasic_auth_users:\n",
            "basic_auth_users: {}\n",
            "tls_server_config: ~\n",
        ] {
            let e = parse(text).unwrap_err();
            let shown = e.to_string();
            assert!(
                matches!(e, WebConfigError::ConfiguresNothing { .. }),
                "{text:?}: {shown}"
            );
            assert!(
                shown.contains("/etc/gym/web.yml")
                    && shown.contains("configures nothing")
                    && shown.contains("GYM_METRICS_WEB_CONFIG_FILE"),
                "{shown}"
            );
        }
        // One user, or TLS alone, is something.
        parse(&format!("basic_auth_users:\n  prom: '{HASH}'\n")).unwrap();
        parse("tls_server_config:\n  cert_file: a\n  key_file: b\n").unwrap();
    }

    #[test]
    fn a_user_name_holding_a_colon_is_refused_never_shown() {
        for text in [
            format!("basic_auth_users:\n  'alice:hunter2-the-password': '{HASH}'\n"),
            format!("basic_auth_users:\n  alice:hunter2-the-password: '{HASH}'\n"),
            format!("basic_auth_users:\n  prom: '{HASH}'\n  ':hunter2-the-password': '{HASH}'\n"),
            "basic_auth_users:\n  alice:hunter2-the-password:\n".into(),
        ] {
            let e = parse(&text).unwrap_err();
            let shown = e.to_string();
            assert!(
                matches!(&e, WebConfigError::Invalid { key, .. } if key == "basic_auth_users"),
                "{text:?}: {shown}"
            );
            assert!(
                !shown.contains("hunter2") && !shown.contains("alice"),
                "{shown}"
            );
            assert!(
                shown.contains("/etc/gym/web.yml") && shown.contains("not shown"),
                "{shown}"
            );
        }
        // A value serde cannot read as a string: serde's message would name
        // the key (its path), so another one is given.
        for value in ["[x]", "{a: b}", "{a: 1, a: 2}", "!!int x", "&x [*x]"] {
            let text = format!(
                "basic_auth_users:\n  prom: '{HASH}'\n  alice:hunter2-the-password: {value}\n"
            );
            let shown = parse(&text).unwrap_err().to_string();
            assert!(
                !shown.contains("hunter2") && !shown.contains("alice"),
                "{shown}"
            );
            assert!(
                shown.contains("/etc/gym/web.yml")
                    && shown.contains("basic_auth_users")
                    && shown.contains("user 2 (in file order)")
                    && shown.contains("not shown"),
                "{shown}"
            );
        }
        let e = parse(&format!(
            "basic_auth_users:\n  prom: '{HASH}'\n  'a:b': '{HASH}'\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("user 2 (in file order)"), "{e}");
    }

    #[test]
    fn a_user_given_twice_is_refused_naming_it() {
        let other = HASH.replacen("$04$", "$05$", 1);
        for text in [
            format!("basic_auth_users:\n  prom: '{HASH}'\n  prom: '{other}'\n"),
            format!("basic_auth_users:\n  prom: '{HASH}'\n  alice: '{HASH}'\n  'prom': '{HASH}'\n"),
            format!("basic_auth_users: {{prom: '{HASH}', \"prom\": '{other}'}}\n"),
        ] {
            let e = parse(&text).unwrap_err();
            let shown = e.to_string();
            assert!(
                matches!(&e, WebConfigError::Invalid { key, .. } if key == "basic_auth_users.prom"),
                "{text:?}: {shown}"
            );
            assert!(
                shown.contains("twice") && shown.contains("/etc/gym/web.yml"),
                "{shown}"
            );
            assert!(!shown.contains(HASH) && !shown.contains(&other), "{shown}");
        }
        // The key itself twice: serde refuses the duplicate field.
        let e = parse(&format!(
            "basic_auth_users:\n  prom: '{HASH}'\nbasic_auth_users:\n  alice: '{HASH}'\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("duplicate") && e.contains("basic_auth_users"),
            "{e}"
        );
        assert!(!e.contains(HASH), "{e}");
    }

    #[test]
    fn tls_1_0_and_1_1_are_refused_naming_tls12() {
        for version in ["TLS10", "TLS11"] {
            let e = parse(&format!(
                "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: {version}\n"
            ))
            .unwrap_err();
            let shown = e.to_string();
            assert!(
                matches!(&e, WebConfigError::Invalid { key, .. } if key == "tls_server_config.min_version"),
                "{shown}"
            );
            assert!(
                shown.contains(version)
                    && shown.contains("lowest version this endpoint supports")
                    && shown.contains("TLS12")
                    && shown.contains("/etc/gym/web.yml"),
                "{shown}"
            );
        }
        for (version, tls12) in [("TLS12", true), ("TLS13", false)] {
            let c = parse(&format!(
                "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: {version}\n"
            ))
            .unwrap();
            assert_eq!(c.tls.map(|t| (t.tls12, t.tls13)), Some((tls12, true)));
        }
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_key() {
        for (text, key) in [
            (
                "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
                "cipher_suites",
            ),
            (
                "http_server_config:\n  http2: false\n",
                "http_server_config",
            ),
            ("basic_auth_user:\n  a: b\n", "basic_auth_user"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("/etc/gym/web.yml"), "{e}");
        }
    }

    #[test]
    fn bad_values_are_errors_naming_the_key_never_the_hash() {
        let cases = [
            ("basic_auth_users:\n  alice: plain-password\n", "basic_auth_users.alice"),
            ("basic_auth_users:\n  'a:b': '$2b$04$Iy/3Dv6K6x1ZuUrg9ZbVPe4Ci6BH9BEF.HZn4r/ZcF1FEI0Ymv3Zm'\n", "basic_auth_users"),
            ("tls_server_config:\n  key_file: b\n", "tls_server_config.cert_file"),
            ("tls_server_config:\n  cert_file: a\n", "tls_server_config.key_file"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n", "tls_server_config.client_ca_file"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAnyClientCert\n  client_ca_file: c\n", "tls_server_config.client_auth_type"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: NoClientCert\n  client_ca_file: c\n", "tls_server_config.client_ca_file"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n", "tls_server_config.min_version"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  max_version: TLS11\n", "tls_server_config.max_version"),
        ];
        for (text, key) in cases {
            let e = parse(text).unwrap_err();
            let shown = e.to_string();
            assert!(
                matches!(&e, WebConfigError::Invalid { key: k, .. } if k == key),
                "{key}: {shown}"
            );
            assert!(shown.contains(key), "{shown}");
            assert!(
                !shown.contains("plain-password") && !shown.contains(HASH),
                "{shown}"
            );
        }
        // A wrong type or an unknown variant names the key too.
        let e = parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS9\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("min_version") || e.contains("TLS9"), "{e}");
    }

    #[test]
    fn verify_if_given_lets_clients_without_a_certificate_in() {
        let c = parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: c\n").unwrap();
        let tls = c.tls.unwrap();
        assert!(tls.client_cert_optional && tls.tls12 && tls.tls13);
    }

    #[test]
    fn an_unreadable_file_is_an_error_naming_it() {
        let e = WebConfig::load(Path::new("/nonexistent/gym-web.yml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/gym-web.yml"), "{e}");
    }

    #[test]
    fn a_value_where_the_users_belong_is_never_echoed() {
        for text in [
            "basic_auth_users: hunter2-the-password\n",
            "basic_auth_users: \"quoted \\\" hunter2-the-password\"\n",
            "basic_auth_users:\n  alice: [hunter2-the-password]\n",
            "tls_server_config: hunter2-the-password\n",
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
            assert!(e.contains("/etc/gym/web.yml"), "{e}");
        }
        assert_eq!(
            redact_strings(r#"invalid type: string "a\"b", expected a map at line 1"#),
            "invalid type: a string (not shown), expected a map at line 1"
        );
    }

    #[test]
    fn a_bcrypt_cost_over_16_is_refused_at_once() {
        // Cost 31 ("secret" would take days): refused before any bcrypt runs.
        let hash = HASH.replacen("$04$", "$31$", 1);
        let started = std::time::Instant::now();
        let e = parse(&format!("basic_auth_users:\n  prom: '{hash}'\n")).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let e = e.to_string();
        assert!(
            e.contains("basic_auth_users.prom") && e.contains("cost 31") && e.contains("16"),
            "{e}"
        );
        assert!(!e.contains(&hash), "{e}");
        parse(&format!(
            "basic_auth_users:\n  prom: '{}'\n",
            HASH.replacen("$04$", "$16$", 1)
        ))
        .unwrap();
    }

    #[test]
    fn deep_nesting_and_endless_files_are_refused_quickly() {
        let started = std::time::Instant::now();
        let e = parse(&"[".repeat(100_000)).unwrap_err().to_string();
        assert!(
            e.contains("nested") && e.contains("/etc/gym/web.yml"),
            "{e}"
        );
        let e = WebConfig::load(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("more than 1048576 bytes"),
            "{e}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // Shallow flow collections are still YAML.
        parse(&format!("basic_auth_users: {{prom: '{HASH}'}}\n")).unwrap();
    }
}
