//! Reading a backend's environment variables once, at start-up, so that a
//! value that is not UTF-8 is an error naming the variable in every backend
//! alike, never silently taken for unset; and the one rule of which
//! variable counts: a blank value is unset, and the first of a group that
//! is set wins (`..._METRICS_...` before the generic variable,
//! `NEMO_GYM_OTEL_*` before `NEMO_LENS_*`).

use std::ffi::OsString;

use crate::ConfigError;

/// What [`EnvVars`] expects of every value.
const UTF8_EXPECTED: &str = "UTF-8 text (the value holds bytes that are not UTF-8; \
     the \u{fffd} above marks them)";

/// The values of a backend's variables, read in one go: every value is
/// UTF-8, or reading failed naming the first variable that was not.
///
/// Every reader of the [`crate::env`] module reads through this; a
/// backend's `from_env()` fills it from the process environment, tests
/// from a map ([`EnvVars::from_lookup`]).
///
/// ```
/// use std::ffi::OsString;
/// use gym_metrics_kit::env::EnvVars;
///
/// let env = EnvVars::from_os_lookup(&["A", "B"], |name| (name == "A").then(|| OsString::from("1")))?;
/// assert_eq!(env.get("A").as_deref(), Some("1"));
/// assert_eq!(env.get("B"), None);
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvVars {
    values: Vec<(&'static str, String)>,
}

impl EnvVars {
    /// Reads `names` from the process environment.
    ///
    /// # Errors
    /// A variable whose value is not UTF-8, naming it.
    ///
    /// ```
    /// let env = gym_metrics_kit::env::EnvVars::from_process(&["GYM_METRICS_DOC_TEST_UNSET"])?;
    /// assert_eq!(env.get("GYM_METRICS_DOC_TEST_UNSET"), None);
    /// # Ok::<(), gym_metrics_kit::ConfigError>(())
    /// ```
    pub fn from_process(names: &[&'static str]) -> Result<Self, ConfigError> {
        Self::from_os_lookup(names, |name| std::env::var_os(name))
    }

    /// Reads `names` through `lookup` (the process environment in
    /// [`EnvVars::from_process`], a map in tests).
    ///
    /// # Errors
    /// A variable whose value is not UTF-8, naming it; the value is shown
    /// with the bad bytes replaced (and secrets redacted, as in every
    /// [`ConfigError`]).
    ///
    /// ```
    /// use std::ffi::OsStr;
    /// use std::os::unix::ffi::OsStrExt;
    /// use gym_metrics_kit::env::EnvVars;
    ///
    /// let bad = OsStr::from_bytes(b"http://c\xff:4318").to_os_string();
    /// let e = EnvVars::from_os_lookup(&["OTEL_EXPORTER_OTLP_ENDPOINT"], |_| Some(bad.clone())).unwrap_err();
    /// assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_ENDPOINT");
    /// assert!(e.to_string().contains("UTF-8"));
    /// ```
    pub fn from_os_lookup(
        names: &[&'static str],
        lookup: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Self, ConfigError> {
        let mut values = Vec::new();
        for &name in names {
            let Some(value) = lookup(name) else {
                continue;
            };
            match value.into_string() {
                Ok(value) => values.push((name, value)),
                Err(raw) => {
                    return Err(ConfigError::invalid(
                        name,
                        raw.to_string_lossy(),
                        UTF8_EXPECTED,
                    ))
                }
            }
        }
        Ok(Self { values })
    }

    /// Reads `names` through `lookup`, whose values are text already (a
    /// builder's `from_env_lookup`, a map in tests).
    ///
    /// ```
    /// let env = gym_metrics_kit::env::EnvVars::from_lookup(&["A"], |_| Some("1".to_string()));
    /// assert_eq!(env.get("A").as_deref(), Some("1"));
    /// ```
    pub fn from_lookup(names: &[&'static str], lookup: impl Fn(&str) -> Option<String>) -> Self {
        let values = names
            .iter()
            .filter_map(|&name| lookup(name).map(|value| (name, value)))
            .collect();
        Self { values }
    }

    /// Variables given as `(name, value)` pairs (a test's, a launcher's),
    /// values as they are.
    ///
    /// ```
    /// let env = gym_metrics_kit::env::EnvVars::from_pairs(&[("OTEL_SERVICE_NAME", "lab")]);
    /// assert_eq!(env.first(&["OTEL_SERVICE_NAME"]), Some(("OTEL_SERVICE_NAME", "lab")));
    /// ```
    pub fn from_pairs(pairs: &[(&'static str, &str)]) -> Self {
        let values = pairs.iter().map(|&(n, v)| (n, v.to_string())).collect();
        Self { values }
    }

    /// The first of `names` whose value is not blank, with its name (for
    /// the error a bad value makes): give the signal-specific or preferred
    /// variable first.
    ///
    /// ```
    /// use gym_metrics_kit::env::EnvVars;
    /// let env = EnvVars::from_lookup(&["SPECIFIC", "GENERIC"], |name| {
    ///     Some(if name == "SPECIFIC" { " " } else { "1" }.to_string())
    /// });
    /// assert_eq!(env.first(&["SPECIFIC", "GENERIC"]), Some(("GENERIC", "1")));
    /// assert_eq!(env.first(&["SPECIFIC"]), None);
    /// ```
    pub fn first(&self, names: &[&'static str]) -> Option<(&'static str, &str)> {
        names.iter().find_map(|&name| {
            self.values
                .iter()
                .find(|(n, v)| *n == name && !v.trim().is_empty())
                .map(|(_, v)| (name, v.as_str()))
        })
    }

    /// The value of `name`, if it was set (an empty value is returned as
    /// it is: [`EnvVars::first`] is what counts it as unset).
    ///
    /// ```
    /// let env = gym_metrics_kit::env::EnvVars::default();
    /// assert_eq!(env.get("OTEL_SERVICE_NAME"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<String> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn os(bytes: &[u8]) -> OsString {
        OsStr::from_bytes(bytes).to_os_string()
    }

    #[test]
    fn a_stray_byte_is_an_error_naming_the_variable_not_unset() {
        let lookup = |name: &str| match name {
            "GOOD" => Some(os(b"lab")),
            "BAD" => Some(os(b"a\x80b")),
            _ => None,
        };
        let e = EnvVars::from_os_lookup(&["GOOD", "BAD", "UNSET"], lookup).unwrap_err();
        assert_eq!(e.variable(), "BAD");
        assert_eq!(e.value(), "a\u{fffd}b");
        let text = e.to_string();
        assert!(text.contains("BAD=") && text.contains("UTF-8"), "{text}");
    }

    #[test]
    fn a_non_utf8_secret_is_still_redacted() {
        let lookup = |_: &str| Some(os(b"authorization=Bearer s3cret\xff"));
        let e = EnvVars::from_os_lookup(&["OTEL_EXPORTER_OTLP_HEADERS"], lookup).unwrap_err();
        let printed = format!("{e} {e:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert!(printed.contains("OTEL_EXPORTER_OTLP_HEADERS"), "{printed}");
    }

    #[test]
    fn only_the_named_variables_are_read() {
        let lookup = |name: &str| Some(os(name.as_bytes()));
        let env = EnvVars::from_os_lookup(&["A"], lookup).unwrap();
        assert_eq!(env.get("A").as_deref(), Some("A"));
        assert_eq!(env.get("B"), None);
    }
}
