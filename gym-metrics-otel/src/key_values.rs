//! The `key=value,key=value` lists of `OTEL_RESOURCE_ATTRIBUTES` and
//! `OTEL_EXPORTER_OTLP_HEADERS`, values percent-decoded.

use gym_metrics_kit::resource::{self, parse_key_value_list};

use crate::ConfigError;

/// Parses a comma-separated `key=value` list; whitespace around entries is
/// trimmed, empty entries are skipped and values are percent-decoded.
///
/// # Errors
/// An entry without `=`, an empty key, or a malformed `%XX` escape, naming
/// `variable` and the whole value.
pub(crate) fn parse_key_values(
    variable: &'static str,
    value: &str,
) -> Result<Vec<(String, String)>, ConfigError> {
    parse_key_value_list(value)
        .ok_or_else(|| ConfigError::invalid(variable, value, resource::KEY_VALUE_LIST_FORMAT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_trims_and_decodes() {
        let pairs = parse_key_values("V", " a=1 , b = x%20y,, c=%2C").unwrap();
        let expected = [("a", "1"), ("b", "x y"), ("c", ",")];
        let expected: Vec<_> = expected
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(pairs, expected);
    }

    #[test]
    fn rejects_malformed_entries_naming_the_variable() {
        for bad in ["novalue", "=v", "k=%2", "k=%zz"] {
            let e = parse_key_values("OTEL_RESOURCE_ATTRIBUTES", bad).unwrap_err();
            assert_eq!(e.variable(), "OTEL_RESOURCE_ATTRIBUTES");
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn empty_list_is_no_pairs() {
        assert!(parse_key_values("V", "").unwrap().is_empty());
    }
}
