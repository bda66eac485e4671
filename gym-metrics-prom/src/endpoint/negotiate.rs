//! Content negotiation: which format (`Accept`) and whether to gzip
//! (`Accept-Encoding`).

/// The exposition format a scraper asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Prometheus text format 0.0.4.
    Text,
    /// OpenMetrics 1.0 text.
    OpenMetrics,
    /// Length-delimited `io.prometheus.client.MetricFamily` messages.
    Protobuf,
}

/// The format of the first media range of `Accept` with the highest
/// non-zero quality that names one we write (protobuf only as
/// `proto=io.prometheus.client.MetricFamily; encoding=delimited`, as
/// Prometheus asks for it), else the 0.0.4 text.
pub(crate) fn format_for(accept: Option<&str>) -> Format {
    let mut best = (Format::Text, 0.0);
    for (range, q, params) in media_ranges(accept.unwrap_or_default()) {
        let param = |name: &str| {
            let value = params.clone().find(|(k, _)| k.eq_ignore_ascii_case(name));
            value.map(|(_, v)| v)
        };
        let format = if range.eq_ignore_ascii_case("application/openmetrics-text") {
            Format::OpenMetrics
        } else if range.eq_ignore_ascii_case("text/plain") {
            Format::Text
        } else if range.eq_ignore_ascii_case("application/vnd.google.protobuf")
            && param("proto") == Some("io.prometheus.client.MetricFamily")
            && param("encoding") == Some("delimited")
        {
            Format::Protobuf
        } else {
            continue;
        };
        if q > best.1 {
            best = (format, q);
        }
    }
    best.0
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
    gzip.or(star).is_some_and(|q| q > 0.0)
}

/// `(value, q, parameters)` for each comma-separated element of a header
/// (`q` is 1 when not given or unreadable).
fn media_ranges(
    header: &str,
) -> impl Iterator<Item = (&str, f32, impl Iterator<Item = (&str, &str)> + Clone)> {
    header.split(',').filter_map(|element| {
        let mut parts = element.split(';').map(str::trim);
        let value = parts.next().filter(|v| !v.is_empty())?;
        let params = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()));
        let q = params
            .clone()
            .find(|(k, _)| k.eq_ignore_ascii_case("q"))
            .and_then(|(_, v)| v.parse::<f32>().ok())
            .unwrap_or(1.0);
        Some((value, q, params))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_3_default_accept_header_gets_openmetrics() {
        let accept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
        assert_eq!(format_for(Some(accept)), Format::OpenMetrics);
    }

    #[test]
    fn prometheus_2_53_with_native_histograms_gets_protobuf() {
        let accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,application/openmetrics-text;version=0.0.1;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
        assert_eq!(format_for(Some(accept)), Format::Protobuf);
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
            // An unreadable quality counts as 1, as for `Accept-Encoding`.
            (format!("text/plain;q=0.5,{proto};q=nonsense"), Format::Protobuf),
        ];
        for (accept, format) in cases {
            assert_eq!(format_for(Some(&accept)), format, "{accept}");
        }
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
            let mut best = (Format::Text, 0.0);
            for &(t, q) in &ranges {
                let q = f32::from(q) / 1000.0;
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
}
