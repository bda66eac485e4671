//! OpenMetrics 1.0 text encoding of gathered metric families (the
//! `prometheus` crate encodes only the 0.0.4 text format).
//!
//! Series, label sets and values are those of the 0.0.4 text; only the
//! framing differs: a counter family is named without `_total`, and the
//! exposition ends with `# EOF`.

use std::fmt::Write;

use prometheus::proto::{LabelPair, Metric, MetricFamily, MetricType};

/// The `Content-Type` of an OpenMetrics 1.0 exposition.
pub(crate) const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Encodes `families` as OpenMetrics 1.0 text.
pub(crate) fn encode_openmetrics(families: &[MetricFamily]) -> String {
    let mut out = String::new();
    for family in families {
        // Writing into a String cannot fail.
        let _ = encode_family(family, &mut out);
    }
    out.push_str("# EOF\n");
    out
}

fn encode_family(family: &MetricFamily, out: &mut String) -> std::fmt::Result {
    let kind = family.get_field_type();
    let sample_name = family.name();
    let family_name = match kind {
        MetricType::COUNTER => sample_name.strip_suffix("_total").unwrap_or(sample_name),
        _ => sample_name,
    };
    let type_word = match kind {
        MetricType::COUNTER => "counter",
        MetricType::GAUGE => "gauge",
        MetricType::HISTOGRAM => "histogram",
        MetricType::SUMMARY => "summary",
        MetricType::UNTYPED => "unknown",
    };
    if !family.help().is_empty() {
        writeln!(out, "# HELP {family_name} {}", escape(family.help()))?;
    }
    writeln!(out, "# TYPE {family_name} {type_word}")?;
    for metric in family.get_metric() {
        match kind {
            MetricType::COUNTER => {
                let name = format!("{family_name}_total");
                sample(
                    out,
                    &name,
                    metric.get_label(),
                    None,
                    metric.get_counter().get_value(),
                )?;
            }
            MetricType::GAUGE => {
                sample(
                    out,
                    sample_name,
                    metric.get_label(),
                    None,
                    metric.get_gauge().get_value(),
                )?;
            }
            MetricType::HISTOGRAM => histogram(out, family_name, metric)?,
            MetricType::SUMMARY | MetricType::UNTYPED => {}
        }
    }
    Ok(())
}

fn histogram(out: &mut String, name: &str, metric: &Metric) -> std::fmt::Result {
    let h = metric.get_histogram();
    let labels = metric.get_label();
    let bucket_name = format!("{name}_bucket");
    let mut inf_seen = false;
    for b in h.get_bucket() {
        let bound = b.upper_bound();
        inf_seen |= bound == f64::INFINITY;
        let le = format_value(bound);
        sample(
            out,
            &bucket_name,
            labels,
            Some(&le),
            b.cumulative_count() as f64,
        )?;
    }
    if !inf_seen {
        sample(
            out,
            &bucket_name,
            labels,
            Some("+Inf"),
            h.get_sample_count() as f64,
        )?;
    }
    sample(
        out,
        &format!("{name}_sum"),
        labels,
        None,
        h.get_sample_sum(),
    )?;
    sample(
        out,
        &format!("{name}_count"),
        labels,
        None,
        h.get_sample_count() as f64,
    )
}

fn sample(
    out: &mut String,
    name: &str,
    labels: &[LabelPair],
    le: Option<&str>,
    value: f64,
) -> std::fmt::Result {
    out.push_str(name);
    if !labels.is_empty() || le.is_some() {
        let mut separator = '{';
        for l in labels {
            write!(out, "{separator}{}=\"{}\"", l.name(), escape(l.value()))?;
            separator = ',';
        }
        if let Some(le) = le {
            write!(out, "{separator}le=\"{le}\"")?;
        }
        out.push('}');
    }
    writeln!(out, " {}", format_value(value))
}

/// Numbers as the 0.0.4 encoder writes them, with OpenMetrics' infinities.
fn format_value(v: f64) -> String {
    if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else if v.is_nan() {
        "NaN".into()
    } else {
        v.to_string()
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::proto::{Bucket, Counter, Histogram};

    fn metric_with(labels: &[(&str, &str)]) -> Metric {
        let mut m = Metric::default();
        m.set_label(
            labels
                .iter()
                .map(|(k, v)| {
                    let mut l = LabelPair::default();
                    l.set_name((*k).into());
                    l.set_value((*v).into());
                    l
                })
                .collect(),
        );
        m
    }

    #[test]
    fn counter_family_drops_total_and_exposition_ends_with_eof() {
        let mut m = metric_with(&[("a", "x\"y")]);
        let mut c = Counter::default();
        c.set_value(4.0);
        m.set_counter(c);
        let mut f = MetricFamily::default();
        f.set_name("gym_verify_completed_total".into());
        f.set_help("Number of completed verifications.".into());
        f.set_field_type(MetricType::COUNTER);
        f.set_metric(vec![m]);
        let text = encode_openmetrics(&[f]);
        assert_eq!(
            text,
            "# HELP gym_verify_completed Number of completed verifications.\n\
             # TYPE gym_verify_completed counter\n\
             gym_verify_completed_total{a=\"x\\\"y\"} 4\n\
             # EOF\n"
        );
    }

    #[test]
    fn histogram_gets_inf_bucket_sum_and_count() {
        let mut m = metric_with(&[]);
        let mut h = Histogram::default();
        let mut b = Bucket::default();
        b.set_upper_bound(100.0);
        b.set_cumulative_count(1);
        h.set_bucket(vec![b]);
        h.set_sample_count(2);
        h.set_sample_sum(250.5);
        m.set_histogram(h);
        let mut f = MetricFamily::default();
        f.set_name("d".into());
        f.set_field_type(MetricType::HISTOGRAM);
        f.set_metric(vec![m]);
        let text = encode_openmetrics(&[f]);
        assert_eq!(
            text,
            "# TYPE d histogram\nd_bucket{le=\"100\"} 1\nd_bucket{le=\"+Inf\"} 2\nd_sum 250.5\nd_count 2\n# EOF\n"
        );
    }
}
