//! Content negotiation: which format (`Accept`) and whether to gzip
//! (`Accept-Encoding`).
//!
//! An element whose quality is not an RFC 9110 §12.4.2 `qvalue` (`0` to
//! `1`, at most three decimals: not `q=inf`, `q=1.5`, `q=-1`, `q=NaN` or
//! `q=high`) is ignored, in both headers, as if the client had not sent it:
//! its weight is unknown, and taken as 1 (as `q=high` once was, and `q=inf`
//! as more) it would beat a well-formed `q=0.9`. An element without `q`
//! weighs 1.

use crate::exposition::format::OPENMETRICS_0_0_1_CONTENT_TYPE;
use crate::handle::{OPENMETRICS_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE, TEXT_CONTENT_TYPE};

/// The exposition format a scraper asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Prometheus text format 0.0.4.
    Text,
    /// OpenMetrics 1.0 text (labelled 0.0.1 when asked for so).
    OpenMetrics,
    /// Length-delimited `io.prometheus.client.MetricFamily` messages.
    Protobuf,
}

/// The format and `Content-Type` of the answer to `Accept`: those of the
/// first media range with the highest non-zero quality that names a format
/// we write (protobuf only as
/// `proto=io.prometheus.client.MetricFamily; encoding=delimited`, as
/// Prometheus asks for it), else the 0.0.4 text.
///
/// OpenMetrics asked for as `version=0.0.1` is answered as client_golang
/// answers it: the same text as 1.0.0 (its `expfmt` writes one OpenMetrics
/// text for both), labelled `version=0.0.1`. Any other version, or none, is
/// answered as 1.0.0, the version we write.
pub(crate) fn negotiate(accept: Option<&str>) -> (Format, &'static str) {
    let mut best = (Format::Text, TEXT_CONTENT_TYPE, 0);
    for (range, q, params) in media_ranges(accept.unwrap_or_default()) {
        let param = |name: &str| {
            let value = params.clone().find(|(k, _)| k.eq_ignore_ascii_case(name));
            // A parameter value may be a quoted string (RFC 9110 §5.6.6).
            value.map(|(_, v)| unquoted(v))
        };
        let answer = if range.eq_ignore_ascii_case("application/openmetrics-text") {
            if param("version") == Some("0.0.1") {
                (Format::OpenMetrics, OPENMETRICS_0_0_1_CONTENT_TYPE)
            } else {
                (Format::OpenMetrics, OPENMETRICS_CONTENT_TYPE)
            }
        } else if range.eq_ignore_ascii_case("text/plain") {
            (Format::Text, TEXT_CONTENT_TYPE)
        } else if range.eq_ignore_ascii_case("application/vnd.google.protobuf")
            && param("proto") == Some("io.prometheus.client.MetricFamily")
            && param("encoding") == Some("delimited")
        {
            (Format::Protobuf, PROTOBUF_CONTENT_TYPE)
        } else {
            continue;
        };
        if q > best.2 {
            best = (answer.0, answer.1, q);
        }
    }
    (best.0, best.1)
}

/// True when `Accept-Encoding` accepts gzip (explicitly or via `*`) with a non-zero quality.
pub(crate) fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    let Some(header) = accept_encoding else {
        return false;
    };
    let mut gzip = None;
    let mut star = None;
    for (coding, q, _) in media_ranges(header) {
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            gzip = Some(q);
        } else if coding == "*" {
            star = Some(q);
        }
    }
    gzip.or(star).is_some_and(|q| q > 0)
}

/// `(value, q in thousandths, parameters)` for each comma-separated element
/// of a header (`q` is 1000 when not given); an element whose `q` is not a
/// `qvalue` is left out.
fn media_ranges(
    header: &str,
) -> impl Iterator<Item = (&str, u16, impl Iterator<Item = (&str, &str)> + Clone)> {
    header.split(',').filter_map(|element| {
        let mut parts = element.split(';').map(str::trim);
        let value = parts.next().filter(|v| !v.is_empty())?;
        let params = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()));
        let q = match params.clone().find(|(k, _)| k.eq_ignore_ascii_case("q")) {
            Some((_, v)) => qvalue(v)?,
            None => 1000,
        };
        Some((value, q, params))
    })
}

/// `value` as thousandths if it is an RFC 9110 `qvalue`:
/// `"0" [ "." 0*3DIGIT ] / "1" [ "." 0*3("0") ]`.
fn qvalue(value: &str) -> Option<u16> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0, |n, digit| n * 10 + u16::from(digit - b'0'));
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// `value` without the quotes of a quoted string (its escapes kept: no
/// value we compare with holds one).
fn unquoted(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format negotiated (the tests' own, whatever `respond` calls).
    fn format_for(accept: Option<&str>) -> Format {
        negotiate(accept).0
    }

    #[test]
    fn prometheus_3_default_accept_header_gets_openmetrics() {
        let accept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
        assert_eq!(
            negotiate(Some(accept)),
            (Format::OpenMetrics, OPENMETRICS_CONTENT_TYPE)
        );
    }

    #[test]
    fn prometheus_2_53_with_native_histograms_gets_protobuf() {
        let accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,application/openmetrics-text;version=0.0.1;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
        assert_eq!(
            negotiate(Some(accept)),
            (Format::Protobuf, PROTOBUF_CONTENT_TYPE)
        );
    }

    #[test]
    fn openmetrics_0_0_1_is_answered_as_0_0_1() {
        assert_eq!(
            OPENMETRICS_0_0_1_CONTENT_TYPE,
            "application/openmetrics-text; version=0.0.1; charset=utf-8"
        );
        let om_0_0_1 = (Format::OpenMetrics, OPENMETRICS_0_0_1_CONTENT_TYPE);
        let om_1_0_0 = (Format::OpenMetrics, OPENMETRICS_CONTENT_TYPE);
        let cases = [
            ("application/openmetrics-text; version=0.0.1", om_0_0_1),
            ("application/openmetrics-text;version=\"0.0.1\";q=0.9", om_0_0_1),
            // Older Prometheus 2 releases asked so.
            (
                "application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
                om_0_0_1,
            ),
            // Later Prometheus 2 releases: 1.0.0 first.
            (
                "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
                om_1_0_0,
            ),
            // The first of equals.
            (
                "application/openmetrics-text;version=0.0.1,application/openmetrics-text;version=1.0.0",
                om_0_0_1,
            ),
            ("application/openmetrics-text", om_1_0_0),
            ("application/openmetrics-text;version=1.0.0", om_1_0_0),
        ];
        for (accept, answer) in cases {
            assert_eq!(negotiate(Some(accept)), answer, "{accept}");
        }
    }

    #[test]
    fn the_highest_quality_wins_and_the_first_of_equals() {
        let proto = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";
        let cases = [
            (format!("text/plain;q=0.9,{proto};q=0.8"), Format::Text),
            (format!("application/openmetrics-text,{proto}"), Format::OpenMetrics),
            (format!("{proto};q=0.3,text/plain;q=0.2"), Format::Protobuf),
            // Another message, another encoding, or none: not ours.
            (
                "application/vnd.google.protobuf;proto=x;encoding=delimited".into(),
                Format::Text,
            ),
            (
                "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text".into(),
                Format::Text,
            ),
            (format!("{proto};q=0"), Format::Text),
            // An unreadable quality makes its range ignored.
            (format!("text/plain;q=0.5,{proto};q=nonsense"), Format::Text),
        ];
        for (accept, format) in cases {
            assert_eq!(format_for(Some(&accept)), format, "{accept}");
        }
    }

    #[test]
    fn a_quality_that_is_not_an_rfc_9110_qvalue_makes_its_range_ignored() {
        let om = "application/openmetrics-text";
        for q in [
            "inf", "+inf", "infinity", "1.5", "2", "1.001", "10", "0.1234", "-1", "-0", "+0.5",
            ".5", "1e-1", "NaN", "nonsense", "", "0x1", "\"0.5\"",
        ] {
            let accept = format!("text/plain;q=0.9,{om};q={q}");
            assert_eq!(format_for(Some(&accept)), Format::Text, "{accept}");
            // Alone, it leaves the default.
            assert_eq!(
                format_for(Some(&format!("{om};q={q}"))),
                Format::Text,
                "{q}"
            );
        }
        // Every form the RFC allows is read.
        for (q, thousandths) in [
            ("0", 0),
            ("0.", 0),
            ("0.5", 500),
            ("0.05", 50),
            ("0.001", 1),
            ("0.999", 999),
            ("1", 1000),
            ("1.", 1000),
            ("1.0", 1000),
            ("1.000", 1000),
        ] {
            assert_eq!(qvalue(q), Some(thousandths), "{q}");
        }
        assert_eq!(
            format_for(Some(&format!("text/plain;q=0.9,{om};Q=1.000"))),
            Format::OpenMetrics
        );
    }

    proptest::proptest! {
        /// Any header is answered: protobuf only when asked for by name, and
        /// among well-formed ranges the highest quality wins.
        #[test]
        fn any_accept_header_gets_a_format(
            junk in ".{0,200}",
            ranges in proptest::collection::vec((0usize..4, 0u16..=1000), 0..6),
        ) {
            if format_for(Some(&junk)) == Format::Protobuf {
                proptest::prop_assert!(junk.contains("io.prometheus.client.MetricFamily"));
            }
            let types = [
                ("text/plain", Some(Format::Text)),
                ("application/openmetrics-text", Some(Format::OpenMetrics)),
                ("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", Some(Format::Protobuf)),
                ("application/json", None),
            ];
            let header: Vec<String> = ranges
                .iter()
                .map(|&(t, q)| format!("{};q={}", types[t].0, f32::from(q) / 1000.0))
                .collect();
            let mut best = (Format::Text, 0);
            for &(t, q) in &ranges {
                if let (Some(format), true) = (types[t].1, q > best.1) {
                    best = (format, q);
                }
            }
            proptest::prop_assert_eq!(format_for(Some(&header.join(","))), best.0);
        }
    }

    #[test]
    fn text_otherwise() {
        assert_eq!(format_for(None), Format::Text);
        assert_eq!(negotiate(None), (Format::Text, TEXT_CONTENT_TYPE));
        assert_eq!(format_for(Some("text/plain;version=0.0.4")), Format::Text);
        assert_eq!(format_for(Some("*/*")), Format::Text);
        assert_eq!(
            format_for(Some("application/openmetrics-text;q=0")),
            Format::Text
        );
    }

    #[test]
    fn gzip_only_when_accepted() {
        assert!(accepts_gzip(Some("gzip")));
        assert!(accepts_gzip(Some("deflate, gzip;q=0.8")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0, *")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(None));
    }

    #[test]
    fn an_invalid_quality_in_accept_encoding_is_ignored_too() {
        assert!(!accepts_gzip(Some("gzip;q=inf")));
        assert!(!accepts_gzip(Some("gzip;q=NaN")));
        assert!(!accepts_gzip(Some("gzip;q=2")));
        // Ignored, not zero: `*` still speaks for gzip.
        assert!(accepts_gzip(Some("gzip;q=1.5, *;q=0.5")));
        assert!(accepts_gzip(Some("gzip;q=1.000")));
    }
}
