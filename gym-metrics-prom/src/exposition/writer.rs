//! The one writer of the exposition's lines: every family of every source
//! is written here, so a sample line, a histogram's `_bucket` lines with
//! their `le` label, `_sum` and `_count` are each spelled in one place.
//!
//! A family's constant text (HELP and TYPE lines, each sample name, the
//! family's own labels and each bucket's `le`) is made once per format
//! ([`FamilyText::new`]): at build time for the gym families, at each
//! scrape for a family known only then. A scrape appends each series'
//! own labels and values between those pieces.

use super::format::{push_count, push_label_pairs, TextFormat};
use super::model::{Family, Kind, Value};

/// The constant text of one family in one format.
#[derive(Debug)]
pub(crate) struct FamilyText {
    /// The HELP and TYPE lines.
    header: String,
    /// `name{`, and a histogram's `name_bucket{`, `name_sum{`, `name_count{`.
    name: String,
    bucket_name: String,
    sum_name: String,
    count_name: String,
    /// The family's labels closing a sample's label set: `a="x"} `.
    tail: String,
    /// The same with each bucket's `le`: `a="x",le="bound"} `, the last
    /// one `+Inf`.
    bucket_tails: Vec<String>,
}

impl FamilyText {
    pub(crate) fn new(family: &Family, format: TextFormat) -> Self {
        let name = &sample_name(family, format);
        let mut pairs = String::new();
        push_label_pairs(
            &mut pairs,
            family.labels.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        );
        let bucket_tails = family
            .bounds
            .iter()
            .map(|&b| format.bound(b))
            .chain(std::iter::once("+Inf".to_string()))
            .map(|le| format!("{pairs}le=\"{le}\"}} "))
            .collect();
        pairs.pop();
        Self {
            header: format.header(name, &family.help, family.kind),
            name: format!("{name}{{"),
            bucket_name: format!("{name}_bucket{{"),
            sum_name: format!("{name}_sum{{"),
            count_name: format!("{name}_count{{"),
            tail: format!("{pairs}}} "),
            bucket_tails,
        }
    }

    /// Appends the family showing `series`, each its own labels (written
    /// before the family's) and its value.
    // Inlined into each caller: an HTTP series calls the line writers on
    // each of its lines (see `push_label_pairs`).
    #[inline(always)]
    pub(crate) fn write<'l, 'v, L>(
        &self,
        format: TextFormat,
        series: impl IntoIterator<Item = (L, Value<'v>)>,
        out: &mut String,
    ) where
        L: Iterator<Item = (&'l str, &'l str)> + Clone,
    {
        out.push_str(&self.header);
        for (labels, value) in series {
            match value {
                Value::Count(n) => {
                    self.open(&self.name, labels, out);
                    push_count(out, n);
                }
                Value::Float(v) => {
                    self.open(&self.name, labels, out);
                    push_float(format, out, v);
                }
                Value::Histogram(h) => {
                    let mut exemplars = h.exemplars.iter();
                    for (tail, cumulative) in self.bucket_tails.iter().zip(h.buckets.cumulative()) {
                        out.push_str(&self.bucket_name);
                        push_label_pairs(out, labels.clone());
                        out.push_str(tail);
                        push_count(out, cumulative);
                        if let Some(Some(exemplar)) = exemplars.next() {
                            format.push_exemplar(out, exemplar);
                        }
                        out.push('\n');
                    }
                    self.open(&self.sum_name, labels.clone(), out);
                    push_float(format, out, h.sum);
                    out.push('\n');
                    self.open(&self.count_name, labels, out);
                    push_count(out, h.buckets.count());
                }
            }
            out.push('\n');
        }
    }

    /// Appends `name{`, the series' labels and the family's, closed: a
    /// family without labels of its own (a process family, an application
    /// registry's) drops the series' last `,`, or the whole empty set, as
    /// `TextEncoder` does.
    #[inline(always)]
    fn open<'a>(
        &self,
        name: &str,
        labels: impl Iterator<Item = (&'a str, &'a str)>,
        out: &mut String,
    ) {
        out.push_str(name);
        push_label_pairs(out, labels);
        if self.tail.starts_with('}') {
            match out.pop() {
                Some(',') => {}
                Some('{') => {
                    out.push(' ');
                    return;
                }
                Some(c) => out.push(c),
                None => {}
            }
        }
        out.push_str(&self.tail);
    }
}

/// Appends a float sample (a histogram's `_sum`, a gauge's value) as
/// `format` writes any value, except that from `1e21` on in magnitude, and
/// below `1e-7` (zero aside), it is written in scientific notation, the
/// shortest digits that read back as `v` (`5.17e301`, `1e308`): Rust's `{}`
/// would write every digit of its integer part (302 for `5.17e301`), or
/// hundreds of zeros after the point. Prometheus (Go's `ParseFloat`) and
/// OpenMetrics (`1*DIGIT ["." *DIGIT] ["e" [sign] 1*DIGIT]`) read both
/// forms; client_golang writes `1e+308`, Rust `1e308`. Within the range
/// the digits are `{}`'s, as `prometheus`'s `TextEncoder` writes them.
#[inline(always)]
fn push_float(format: TextFormat, out: &mut String, v: f64) {
    let magnitude = v.abs();
    if v.is_finite() && (magnitude >= 1e21 || (magnitude < 1e-7 && magnitude != 0.0)) {
        push_scientific(out, v);
    } else {
        format.push_value(out, v);
    }
}

/// `v` in scientific notation, shortest round trip.
#[cold]
#[inline(never)]
fn push_scientific(out: &mut String, v: f64) {
    use std::fmt::Write;
    // Writing into a String cannot fail.
    let _ = write!(out, "{v:e}");
}

/// The name `family`'s samples carry in `format`: in OpenMetrics a counter's
/// end in `_total` (ours always do; an application registry's may not).
fn sample_name(family: &Family, format: TextFormat) -> String {
    let name = &family.name;
    if format == TextFormat::OpenMetrics
        && family.kind == Kind::Counter
        && !name.ends_with("_total")
    {
        format!("{name}_total")
    } else {
        name.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::super::model::{Buckets, Histogram};
    use super::*;

    fn family(kind: Kind, labels: &[(&str, &str)], bounds: &[f64]) -> Family {
        Family {
            name: "f".to_string(),
            help: Cow::Borrowed("h"),
            kind,
            labels: labels
                .iter()
                .map(|&(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            bounds: bounds.to_vec(),
        }
    }

    fn written<'a>(
        family: &Family,
        format: TextFormat,
        series: &'a [(&'a [(&'a str, &'a str)], Value<'a>)],
    ) -> String {
        let mut out = String::new();
        FamilyText::new(family, format).write(
            format,
            series.iter().map(|(l, v)| (l.iter().copied(), *v)),
            &mut out,
        );
        out
    }

    #[test]
    fn a_series_labels_come_before_the_familys_then_le() {
        let f = family(Kind::Histogram, &[("s", "1")], &[0.5]);
        let value = Value::Histogram(Histogram::classic(Buckets::PerBucket(&[1, 2]), 2.5));
        assert_eq!(
            written(&f, TextFormat::OpenMetrics, &[(&[("a", "x")], value)]),
            "# HELP f h\n# TYPE f histogram\n\
             f_bucket{a=\"x\",s=\"1\",le=\"0.5\"} 1\n\
             f_bucket{a=\"x\",s=\"1\",le=\"+Inf\"} 3\n\
             f_sum{a=\"x\",s=\"1\"} 2.5\n\
             f_count{a=\"x\",s=\"1\"} 3\n"
        );
    }

    #[test]
    fn without_labels_of_its_own_a_family_closes_or_drops_the_set() {
        let f = family(Kind::Gauge, &[], &[]);
        assert_eq!(
            written(
                &f,
                TextFormat::Prometheus,
                &[(&[], Value::Count(3)), (&[("a", "x")], Value::Float(0.5))]
            ),
            "# HELP f h\n# TYPE f gauge\nf 3\nf{a=\"x\"} 0.5\n"
        );
        let h = family(Kind::Histogram, &[], &[]);
        let value = Value::Histogram(Histogram::classic(Buckets::Cumulative(&[4]), 1.0));
        assert_eq!(
            written(&h, TextFormat::Prometheus, &[(&[], value)]),
            "# HELP f h\n# TYPE f histogram\nf_bucket{le=\"+Inf\"} 4\nf_sum 1\nf_count 4\n"
        );
    }

    #[test]
    fn an_exemplar_follows_its_bucket_in_openmetrics_only() {
        use gym_metrics_api::backend::Exemplar;
        let f = family(Kind::Histogram, &[], &[0.5]);
        let exemplar = gym_metrics_kit::recording::ExemplarSample {
            exemplar: Exemplar::new([0xab; 16], [0xcd; 8]).unwrap(),
            value: 0.25,
            timestamp: 1_700_000_000.5,
        };
        let exemplars = [Some(exemplar), None];
        let value = Value::Histogram(Histogram {
            exemplars: &exemplars,
            ..Histogram::classic(Buckets::PerBucket(&[1, 0]), 0.25)
        });
        let series = [(&[][..], value)];
        let om = written(&f, TextFormat::OpenMetrics, &series);
        let ids = format!(
            "trace_id=\"{}\",span_id=\"{}\"",
            "ab".repeat(16),
            "cd".repeat(8)
        );
        assert!(
            om.contains(&format!("f_bucket{{le=\"0.5\"}} 1 # {{{ids}}} 0.25 1700000000.5\nf_bucket{{le=\"+Inf\"}} 1\n")),
            "{om}"
        );
        let text = written(&f, TextFormat::Prometheus, &series);
        assert!(!text.contains("trace_id"), "{text}");
    }

    #[test]
    fn a_huge_or_tiny_sum_is_written_in_scientific_notation_that_reads_back() {
        use gym_metrics_api::backend::Instrument;
        let f = family(Kind::Histogram, &[], &[]);
        let g = family(Kind::Gauge, &[], &[]);
        for (v, text) in [
            (5.17e301, "5.17e301"),
            (1e308, "1e308"),
            (f64::MAX, "1.7976931348623157e308"),
            (1e21, "1e21"),
            (5e-324, "5e-324"),
            (-2.5e-8, "-2.5e-8"),
            // Within the range: the digits `{}` writes, as before.
            (9.999999999999999e20, "999999999999999900000"),
            (Instrument::MAX_DURATION_MS, "18446744073709.55"),
            (1e-7, "0.0000001"),
            (0.0, "0"),
            (2.5, "2.5"),
        ] {
            for format in [TextFormat::Prometheus, TextFormat::OpenMetrics] {
                let value = Value::Histogram(Histogram::classic(Buckets::Cumulative(&[1]), v));
                let out = written(&f, format, &[(&[], value)]);
                let line = out.lines().find(|l| l.starts_with("f_sum")).unwrap();
                assert_eq!(line, format!("f_sum {text}"), "{format:?}");
                assert_eq!(text.parse::<f64>(), Ok(v));
                let out = written(&g, format, &[(&[], Value::Float(v))]);
                assert!(out.ends_with(&format!("\nf {text}\n")), "{out}");
            }
        }
        // Infinities are each format's own, as before.
        let inf = Value::Histogram(Histogram::classic(Buckets::Cumulative(&[1]), f64::INFINITY));
        let out = written(&f, TextFormat::OpenMetrics, &[(&[], inf)]);
        assert!(out.contains("f_sum +Inf\n"), "{out}");
    }

    #[test]
    fn an_openmetrics_counter_sample_ends_in_total() {
        let f = family(Kind::Counter, &[], &[]);
        assert_eq!(
            written(&f, TextFormat::OpenMetrics, &[(&[], Value::Float(1.0))]),
            "# HELP f h\n# TYPE f counter\nf_total 1\n"
        );
    }
}
