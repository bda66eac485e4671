//! Whether a `metrics` name can be an OpenTelemetry instrument name, as the
//! specification's syntax (and opentelemetry_sdk 0.33's check) says: 1 to
//! 255 ASCII characters, a letter first, then letters, digits, `_`, `.`,
//! `-` and `/`. The SDK would turn any other name into an instrument that
//! records nothing, so the bridge refuses it instead, logged and counted.
//! (The Prometheus path can translate such a name, `9lives` to `_9lives`;
//! OpenTelemetry has no such rule, and a collector would receive nothing.)

/// The longest instrument name the specification allows.
const MAX_LEN: usize = 255;

/// Why `name` cannot be an OpenTelemetry instrument name; `None` if it can.
pub(crate) fn otel_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("nothing of it is left for a name");
    }
    if name.len() > MAX_LEN {
        return Some("an OpenTelemetry instrument name has at most 255 characters");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Some("an OpenTelemetry instrument name starts with an ASCII letter");
    }
    if name
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')))
    {
        return Some(
            "an OpenTelemetry instrument name holds only ASCII letters, digits, '_', '.', '-' and '/'",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::otel_name_problem;

    #[test]
    fn the_specifications_syntax() {
        for ok in ["a", "jobs.done", "http.client/retries", "a-b_c.9"] {
            assert_eq!(otel_name_problem(ok), None, "{ok}");
        }
        for bad in ["", "9lives", "_x", ".x", "héllo", "a b", "a:b"] {
            assert!(otel_name_problem(bad).is_some(), "{bad}");
        }
        assert!(otel_name_problem(&"a".repeat(255)).is_none());
        assert!(otel_name_problem(&"a".repeat(256)).is_some());
    }
}
