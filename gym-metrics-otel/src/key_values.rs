//! The `key=value,key=value` lists of `OTEL_RESOURCE_ATTRIBUTES` and
//! `OTEL_EXPORTER_OTLP_HEADERS`, values percent-decoded.

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
    let invalid = || {
        ConfigError::invalid(
            variable,
            value,
            "a comma-separated list of key=value pairs with percent-encoded values, e.g. k1=v1,k2=a%20b",
        )
    };
    let mut pairs = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (key, raw) = entry.split_once('=').ok_or_else(invalid)?;
        let key = key.trim();
        if key.is_empty() {
            return Err(invalid());
        }
        let decoded = percent_decode(raw.trim()).ok_or_else(invalid)?;
        pairs.push((key.to_string(), decoded));
    }
    Ok(pairs)
}

/// Decodes `%XX` escapes; `None` for a truncated or non-hex escape or a
/// result that is not UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
