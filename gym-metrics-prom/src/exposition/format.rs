//! The two text formats' pieces the writer (`writer.rs`) puts together:
//! the Prometheus 0.0.4 text as `prometheus`'s `TextEncoder` writes it, and
//! OpenMetrics 1.0, whose series, label sets and values are the same; only
//! the framing differs (a counter family is named without `_total`, HELP
//! escapes quotes, infinities are `+Inf`/`-Inf`, the text ends with `# EOF`).

use std::fmt::Write;

use super::model::{ExemplarSample, Kind};

/// The `Content-Type` of an OpenMetrics 1.0 exposition.
pub(crate) const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `Content-Type` of the same OpenMetrics text answered to a scraper
/// that asked for version 0.0.1 (older Prometheus): the text is the one
/// written for 1.0.0, as client_golang's `expfmt` writes one text for both.
pub(crate) const OPENMETRICS_0_0_1_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=0.0.1; charset=utf-8";

/// Which text format to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextFormat {
    /// Prometheus text format 0.0.4.
    Prometheus,
    /// OpenMetrics 1.0 text.
    OpenMetrics,
}

impl TextFormat {
    /// The `# HELP` (when `help` is not empty) and `# TYPE` lines of the
    /// family whose samples are named `sample_name`.
    pub(crate) fn header(self, sample_name: &str, help: &str, kind: Kind) -> String {
        let family = match (self, kind) {
            (TextFormat::OpenMetrics, Kind::Counter) => {
                sample_name.strip_suffix("_total").unwrap_or(sample_name)
            }
            _ => sample_name,
        };
        let mut out = String::new();
        if !help.is_empty() {
            out.push_str("# HELP ");
            out.push_str(family);
            out.push(' ');
            push_escaped(&mut out, help, self == TextFormat::OpenMetrics);
            out.push('\n');
        }
        out.push_str("# TYPE ");
        out.push_str(family);
        out.push(' ');
        out.push_str(kind.word());
        out.push('\n');
        out
    }

    /// Appends a sample value.
    // Inlined into the writer's loops, as `push_label_pairs`: out of line,
    // the calls alone cost a render about 2% (callgrind).
    #[inline(always)]
    pub(crate) fn push_value(self, out: &mut String, v: f64) {
        match self {
            TextFormat::OpenMetrics if v == f64::INFINITY => out.push_str("+Inf"),
            TextFormat::OpenMetrics if v == f64::NEG_INFINITY => out.push_str("-Inf"),
            // Writing into a String cannot fail.
            _ => {
                let _ = write!(out, "{v}");
            }
        }
    }

    /// Appends ` # {trace_id="…",span_id="…"} value timestamp` in
    /// OpenMetrics; nothing in the 0.0.4 text, which has no exemplars.
    pub(crate) fn push_exemplar(self, out: &mut String, sample: &ExemplarSample) {
        if self == TextFormat::OpenMetrics {
            out.push_str(" # {trace_id=\"");
            out.push_str(&sample.exemplar.trace_id_hex());
            out.push_str("\",span_id=\"");
            out.push_str(&sample.exemplar.span_id_hex());
            out.push_str("\"} ");
            self.push_value(out, sample.value);
            out.push(' ');
            self.push_value(out, sample.timestamp);
        }
    }

    /// The `le` value of a bucket bound.
    pub(crate) fn bound(self, bound: f64) -> String {
        let mut out = String::new();
        self.push_value(&mut out, bound);
        out
    }
}

/// Appends a count as both encoders wrote it (as an `f64`): the integer
/// itself while `f64` holds it exactly.
pub(crate) fn push_count(out: &mut String, count: u64) {
    const EXACT: u64 = 1 << f64::MANTISSA_DIGITS;
    if count <= EXACT {
        // The same digits as `{count}`, without a trip through the
        // formatting machinery: a scrape writes one count per bucket.
        out.push_str(itoa::Buffer::new().format(count));
    } else {
        // Writing into a String cannot fail.
        let _ = write!(out, "{}", count as f64);
    }
}

/// Appends `s` with `\` and newlines escaped, and `"` when `quotes`.
pub(crate) fn push_escaped(out: &mut String, s: &str, quotes: bool) {
    let escaped = |b: u8| b == b'\\' || b == b'\n' || (quotes && b == b'"');
    let mut rest = s;
    // Runs between escapes are copied whole: most values have none, and a
    // scrape writes every series' label values on each of its lines. The
    // escaped characters are ASCII, so each split falls on a char boundary.
    while let Some(at) = rest.bytes().position(escaped) {
        out.push_str(&rest[..at]);
        out.push_str(match rest.as_bytes()[at] {
            b'\\' => "\\\\",
            b'\n' => "\\n",
            _ => "\\\"",
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// Appends `name="value"` pairs, each followed by `,`, values escaped.
// An HTTP series calls this on each of its lines: inlined (see `push_value`).
#[inline(always)]
pub(crate) fn push_label_pairs<'a>(
    out: &mut String,
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    for (name, value) in labels {
        out.push_str(name);
        out.push_str("=\"");
        push_escaped(out, value, true);
        out.push_str("\",");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_counter_family_drops_total_and_escapes_quotes_in_help() {
        assert_eq!(
            TextFormat::OpenMetrics.header("a_total", "say \"hi\"\n", Kind::Counter),
            "# HELP a say \\\"hi\\\"\\n\n# TYPE a counter\n"
        );
        assert_eq!(
            TextFormat::Prometheus.header("a_total", "say \"hi\"", Kind::Counter),
            "# HELP a_total say \"hi\"\n# TYPE a_total counter\n"
        );
        assert_eq!(
            TextFormat::Prometheus.header("d", "", Kind::Histogram),
            "# TYPE d histogram\n"
        );
    }

    #[test]
    fn values_and_counts_are_written_as_the_encoders_wrote_them() {
        let mut out = String::new();
        TextFormat::Prometheus.push_value(&mut out, f64::INFINITY);
        out.push(' ');
        TextFormat::OpenMetrics.push_value(&mut out, f64::INFINITY);
        out.push(' ');
        TextFormat::OpenMetrics.push_value(&mut out, 250.5);
        out.push(' ');
        push_count(&mut out, 4);
        out.push(' ');
        push_count(&mut out, u64::MAX);
        assert_eq!(
            out,
            format!("{} +Inf 250.5 4 {}", f64::INFINITY, u64::MAX as f64)
        );
    }

    #[test]
    fn counts_are_their_digits_while_f64_holds_them_then_the_f64() {
        const EXACT: u64 = 1 << f64::MANTISSA_DIGITS;
        let written = |n| {
            let mut out = String::new();
            push_count(&mut out, n);
            out
        };
        let edges = [0, 9, 10, 99, 100, u64::from(u32::MAX), EXACT - 1, EXACT];
        for n in edges {
            assert_eq!(written(n), n.to_string());
        }
        // 2^53 + 1 has no f64: the encoders wrote the nearest one.
        assert_eq!(written(EXACT + 1), "9007199254740992");
    }

    #[test]
    fn escapes_each_special_character_and_copies_the_rest() {
        let escaped = |s: &str, quotes| {
            let mut out = String::from(">");
            push_escaped(&mut out, s, quotes);
            out
        };
        let s = "\\ä\"\n\n東\"";
        assert_eq!(escaped(s, true), ">\\\\ä\\\"\\n\\n東\\\"");
        assert_eq!(escaped(s, false), ">\\\\ä\"\\n\\n東\"");
        assert_eq!(escaped("plain", true), ">plain");
        assert_eq!(escaped("", true), ">");
    }
}
