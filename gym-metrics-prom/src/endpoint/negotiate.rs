//! Content negotiation: which format (`Accept`) and whether to gzip
//! (`Accept-Encoding`).

/// The exposition format a scraper asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Prometheus text format 0.0.4.
    Text,
    /// OpenMetrics 1.0 text.
    OpenMetrics,
}

/// OpenMetrics when `Accept` lists `application/openmetrics-text` with a
/// non-zero quality, else the 0.0.4 text.
pub(crate) fn format_for(accept: Option<&str>) -> Format {
    let wants = accept.is_some_and(|accept| {
        media_ranges(accept)
            .any(|(range, q)| range.eq_ignore_ascii_case("application/openmetrics-text") && q > 0.0)
    });
    if wants {
        Format::OpenMetrics
    } else {
        Format::Text
    }
}

/// True when `Accept-Encoding` accepts gzip (explicitly or via `*`) with a non-zero quality.
pub(crate) fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    let Some(header) = accept_encoding else {
        return false;
    };
    let mut gzip = None;
    let mut star = None;
    for (coding, q) in media_ranges(header) {
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            gzip = Some(q);
        } else if coding == "*" {
            star = Some(q);
        }
    }
    gzip.or(star).is_some_and(|q| q > 0.0)
}

/// `(value, q)` for each comma-separated element of a header, parameters other than `q` ignored.
fn media_ranges(header: &str) -> impl Iterator<Item = (&str, f32)> {
    header.split(',').filter_map(|element| {
        let mut parts = element.split(';').map(str::trim);
        let value = parts.next().filter(|v| !v.is_empty())?;
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
            .and_then(|(_, v)| v.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        Some((value, q))
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
