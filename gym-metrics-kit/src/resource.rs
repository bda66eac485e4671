//! Backend-neutral pieces of a process's OpenTelemetry resource: the
//! per-process `service.instance.id` and the `key=value` lists of
//! `OTEL_RESOURCE_ATTRIBUTES` (and `OTEL_EXPORTER_OTLP_HEADERS`).
//!
//! Both backends read these, so both describe a process the same way.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

/// A version-4-shaped UUID, unique per call: the clock, the process id and
/// the standard library's per-process random hasher keys, without a
/// random-number crate.
///
/// ```
/// use gym_metrics_kit::resource::new_instance_id;
/// let id = new_instance_id();
/// assert_eq!(id.len(), 36);
/// assert_ne!(id, new_instance_id());
/// ```
pub fn new_instance_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let pid = std::process::id();
    let half = |salt: u64| {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(pid);
        h.write_u64(salt);
        h.finish()
    };
    let (hi, lo) = (half(1), half(2));
    // Set the version (4) and variant (10xx) bits.
    let hi = (hi & !0xF000) | 0x4000;
    let lo = (lo & !(0xC << 60)) | (0x8 << 60);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// What a `key=value` list must look like, for error messages.
///
/// ```
/// use gym_metrics_kit::resource::{parse_key_value_list, KEY_VALUE_LIST_FORMAT};
/// let value = "team";
/// let error = parse_key_value_list(value)
///     .is_none()
///     .then(|| format!("OTEL_RESOURCE_ATTRIBUTES={value:?} is not {KEY_VALUE_LIST_FORMAT}"));
/// let error = error.expect("`team` has no `=`");
/// assert!(error.starts_with(r#"OTEL_RESOURCE_ATTRIBUTES="team" is not a comma-separated list"#));
/// ```
pub const KEY_VALUE_LIST_FORMAT: &str =
    "a comma-separated list of key=value pairs with percent-encoded values, e.g. k1=v1,k2=a%20b";

/// Parses a comma-separated `key=value` list (the W3C-baggage-like format of
/// `OTEL_RESOURCE_ATTRIBUTES`): whitespace around entries, keys and values is
/// trimmed, empty entries are skipped, values are percent-decoded.
///
/// `None` when an entry has no `=`, an empty key, or a truncated, non-hex or
/// non-UTF-8 `%XX` escape; the caller names its variable and the value.
///
/// ```
/// use gym_metrics_kit::resource::parse_key_value_list;
/// let pairs = parse_key_value_list("team=rl, note=a%2Cb").unwrap();
/// assert_eq!(pairs, vec![("team".into(), "rl".into()), ("note".into(), "a,b".into())]);
/// assert_eq!(parse_key_value_list("team"), None);
/// ```
pub fn parse_key_value_list(value: &str) -> Option<Vec<(String, String)>> {
    value
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let (key, raw) = entry.split_once('=')?;
            let key = key.trim();
            if key.is_empty() {
                return None;
            }
            Some((key.to_string(), percent_decode(raw.trim())?))
        })
        .collect()
}

/// Decodes `%XX` escapes; `None` for a truncated or non-hex escape or a
/// result that is not UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
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
    fn instance_ids_are_uuid_shaped_and_distinct() {
        let a = new_instance_id();
        let b = new_instance_id();
        assert_ne!(a, b);
        let groups: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{a}");
        assert_eq!(&a[14..15], "4", "{a}");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }

    #[test]
    fn parses_trims_and_decodes() {
        let pairs = parse_key_value_list(" a=1 , b = x%20y,, c=%2C").unwrap();
        let expected: Vec<(String, String)> = [("a", "1"), ("b", "x y"), ("c", ",")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(pairs, expected);
        assert_eq!(parse_key_value_list(""), Some(vec![]));
    }

    #[test]
    fn rejects_malformed_entries() {
        for bad in ["novalue", "=v", "k=%2", "k=%zz", "k=%+1", "k=%ff"] {
            assert_eq!(parse_key_value_list(bad), None, "{bad}");
        }
    }
}
