//! The one parser of every configuration value that is a boolean, one of a
//! few words, a number, a duration or a `key=value` list: a bad value is a [`ConfigError`] naming
//! the variable and the value (secrets redacted), never a default taken in
//! silence. Surrounding whitespace is ignored.

use std::str::FromStr;
use std::time::Duration;

use crate::resource::{parse_key_value_list, KEY_VALUE_LIST_FORMAT};
use crate::ConfigError;

/// Which words a boolean variable accepts (case-insensitive).
///
/// ```
/// use gym_metrics_kit::env::{parse_bool, Booleans};
/// assert_eq!(parse_bool("NEMO_GYM_OTEL_ENABLED", "on", Booleans::Gym), Ok(true));
/// assert!(parse_bool("OTEL_SDK_DISABLED", "on", Booleans::OpenTelemetry).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Booleans {
    /// `true` or `false`, as the OpenTelemetry specification spells them.
    OpenTelemetry,
    /// Also `1`, `yes`, `on` and `0`, `no`, `off`, as NeMo Gym reads its own.
    Gym,
}

/// `value` of `variable` as a boolean, in the words `booleans` accepts.
///
/// # Errors
/// Any other word, naming the variable, the value and the words accepted.
///
/// ```
/// use gym_metrics_kit::env::{parse_bool, Booleans};
/// assert_eq!(parse_bool("OTEL_SDK_DISABLED", " TRUE ", Booleans::OpenTelemetry), Ok(true));
/// assert_eq!(parse_bool("NEMO_LENS_ENABLED", "Off", Booleans::Gym), Ok(false));
/// let e = parse_bool("OTEL_EXPORTER_OTLP_INSECURE", "yes", Booleans::OpenTelemetry).unwrap_err();
/// assert!(e.to_string().contains("OTEL_EXPORTER_OTLP_INSECURE=\"yes\""));
/// ```
pub fn parse_bool(
    variable: &'static str,
    value: &str,
    booleans: Booleans,
) -> Result<bool, ConfigError> {
    let gym = booleans == Booleans::Gym;
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        "1" | "yes" | "on" if gym => Ok(true),
        "0" | "no" | "off" if gym => Ok(false),
        _ if gym => Err(ConfigError::invalid(
            variable,
            value,
            "1, true, yes, on or 0, false, no, off",
        )),
        _ => Err(ConfigError::invalid(variable, value, "true or false")),
    }
}

/// `value` of `variable` as one of the words of `choices` (case-insensitive),
/// each standing for its value.
///
/// # Errors
/// Any other word, naming the variable and the value, and listing the words
/// accepted followed by `note` (when not empty) in parentheses.
///
/// ```
/// use gym_metrics_kit::env::parse_choice;
/// let words = [("cumulative", 'c'), ("delta", 'd')];
/// let v = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
/// assert_eq!(parse_choice(v, " Delta", &words, ""), Ok('d'));
/// let e = parse_choice(v, "weekly", &words, "the specification's").unwrap_err();
/// assert_eq!(e.expected(), "cumulative or delta (the specification's)");
/// ```
pub fn parse_choice<T: Copy>(
    variable: &'static str,
    value: &str,
    choices: &[(&str, T)],
    note: &str,
) -> Result<T, ConfigError> {
    let word = value.trim();
    if let Some(&(_, chosen)) = choices.iter().find(|(w, _)| w.eq_ignore_ascii_case(word)) {
        return Ok(chosen);
    }
    let mut expected = String::new();
    for (i, (word, _)) in choices.iter().enumerate() {
        let separator = match i {
            0 => "",
            i if i + 1 == choices.len() => " or ",
            _ => ", ",
        };
        expected.push_str(separator);
        expected.push_str(word);
    }
    if !note.is_empty() {
        expected.push_str(&format!(" ({note})"));
    }
    Err(ConfigError::invalid(variable, value, expected))
}

/// `value` of `variable` as a number of type `T` (a port, a count).
///
/// # Errors
/// A value `T` does not parse, naming the variable, the value and what was
/// `expected`.
///
/// ```
/// use gym_metrics_kit::env::parse_number;
/// assert_eq!(parse_number::<u16>("OTEL_EXPORTER_PROMETHEUS_PORT", " 9464", "a port"), Ok(9464));
/// let e = parse_number::<u16>("OTEL_EXPORTER_PROMETHEUS_PORT", "70000", "a port").unwrap_err();
/// assert_eq!(e.expected(), "a port");
/// ```
pub fn parse_number<T: FromStr>(
    variable: &'static str,
    value: &str,
    expected: &'static str,
) -> Result<T, ConfigError> {
    value
        .trim()
        .parse()
        .map_err(|_| ConfigError::invalid(variable, value, expected))
}

/// `value` of `variable` as a duration: a positive whole number of
/// milliseconds, as every OpenTelemetry timeout and interval is given.
///
/// # Errors
/// Zero, a negative or fractional number, or a unit (`10s`), naming the
/// variable and the value.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_kit::env::parse_millis;
/// assert_eq!(parse_millis("OTEL_METRIC_EXPORT_INTERVAL", "250"), Ok(Duration::from_millis(250)));
/// assert!(parse_millis("OTEL_METRIC_EXPORT_INTERVAL", "10s").is_err());
/// assert!(parse_millis("OTEL_METRIC_EXPORT_INTERVAL", "0").is_err());
/// ```
pub fn parse_millis(variable: &'static str, value: &str) -> Result<Duration, ConfigError> {
    const EXPECTED: &str = "a positive whole number of milliseconds, e.g. 10000";
    match parse_number::<u64>(variable, value, EXPECTED)? {
        0 => Err(ConfigError::invalid(variable, value, EXPECTED)),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// `value` of `variable` as a duration of at least `least`: a whole number
/// of milliseconds, as [`parse_millis`] reads it, bounded below (an export
/// interval, where a tiny value floods the collector).
///
/// # Errors
/// What [`parse_millis`] refuses, and a value under `least`, naming the
/// variable, the value and `expected`.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_kit::env::parse_millis_at_least;
/// let least = Duration::from_millis(50);
/// let expected = "at least 50 ms";
/// assert_eq!(
///     parse_millis_at_least("OTEL_METRIC_EXPORT_INTERVAL", "50", least, expected),
///     Ok(least),
/// );
/// let e = parse_millis_at_least("OTEL_METRIC_EXPORT_INTERVAL", "1", least, expected).unwrap_err();
/// assert_eq!(e.expected(), "at least 50 ms");
/// ```
pub fn parse_millis_at_least(
    variable: &'static str,
    value: &str,
    least: Duration,
    expected: &'static str,
) -> Result<Duration, ConfigError> {
    match parse_millis(variable, value)? {
        d if d < least => Err(ConfigError::invalid(variable, value, expected)),
        d => Ok(d),
    }
}

/// `value` of `variable` as a comma-separated `key=value` list
/// (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`): whitespace
/// around entries trimmed, empty entries skipped, values percent-decoded.
///
/// # Errors
/// An entry without `=`, an empty key, or a malformed `%XX` escape, naming
/// the variable and the whole value (header values redacted).
///
/// ```
/// use gym_metrics_kit::env::parse_key_values;
/// let pairs = parse_key_values("OTEL_RESOURCE_ATTRIBUTES", "team=rl, zone=a%2Fb")?;
/// assert_eq!(pairs[1], ("zone".to_string(), "a/b".to_string()));
/// assert!(parse_key_values("OTEL_RESOURCE_ATTRIBUTES", "novalue").is_err());
/// # Ok::<(), gym_metrics_kit::ConfigError>(())
/// ```
pub fn parse_key_values(
    variable: &'static str,
    value: &str,
) -> Result<Vec<(String, String)>, ConfigError> {
    parse_key_value_list(value)
        .ok_or_else(|| ConfigError::invalid(variable, value, KEY_VALUE_LIST_FORMAT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_boolean_spelling_in_either_vocabulary() {
        for (word, value) in [("true", true), ("FALSE", false), (" True ", true)] {
            for booleans in [Booleans::OpenTelemetry, Booleans::Gym] {
                assert_eq!(parse_bool("V", word, booleans), Ok(value), "{word}");
            }
        }
        for (word, value) in [("1", true), ("YES", true), ("on", true), ("0", false)] {
            assert_eq!(parse_bool("V", word, Booleans::Gym), Ok(value), "{word}");
            let e = parse_bool("V", word, Booleans::OpenTelemetry).unwrap_err();
            assert_eq!(e.expected(), "true or false");
        }
        for bad in ["maybe", "2", "", "enabled"] {
            for booleans in [Booleans::OpenTelemetry, Booleans::Gym] {
                assert!(parse_bool("V", bad, booleans).is_err(), "{bad}");
            }
        }
    }

    #[test]
    fn millis_are_positive_whole_numbers() {
        assert_eq!(parse_millis("V", " 1500 "), Ok(Duration::from_millis(1500)));
        for bad in ["-1", "0", "30s", "1.5", "forever"] {
            let e = parse_millis("V", bad).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn bounded_millis_refuse_what_is_below_the_bound() {
        let least = Duration::from_millis(50);
        assert_eq!(parse_millis_at_least("V", "50", least, "x"), Ok(least));
        assert_eq!(
            parse_millis_at_least("V", " 60000 ", least, "x"),
            Ok(Duration::from_secs(60))
        );
        for bad in ["1", "49"] {
            let e = parse_millis_at_least("V", bad, least, "at least 50").unwrap_err();
            assert_eq!(e.expected(), "at least 50");
            assert!(e.to_string().contains(bad), "{e}");
        }
        for bad in ["0", "10s", "-5"] {
            assert!(
                parse_millis_at_least("V", bad, least, "x").is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn key_values_parse_trim_and_decode() {
        let pairs = parse_key_values("V", " a=1 , b = x%20y,, c=%2C").unwrap();
        let expected: Vec<_> = [("a", "1"), ("b", "x y"), ("c", ",")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(pairs, expected);
        assert!(parse_key_values("V", "").unwrap().is_empty());
        for bad in ["novalue", "=v", "k=%2", "k=%zz"] {
            let e = parse_key_values("OTEL_RESOURCE_ATTRIBUTES", bad).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
