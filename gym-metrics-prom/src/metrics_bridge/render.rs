//! The bridged families as exposition text, after ours, in either format:
//! each series' labels, then `otel_scope_name="metrics"`, as OpenTelemetry's
//! exporter writes a series of the `metrics` scope; the overflow series last.

use std::collections::HashSet;

use super::registry::{AnySeries, BridgedFamily, Registry};
use crate::appendix::Appendix;
use crate::text_format::{push_count, push_label_pairs, TextFormat};
use gym_metrics_kit::naming::sample_names;

/// The instrumentation scope of every bridged series.
pub(crate) const SCOPE: (&str, &str) = ("otel_scope_name", "metrics");

/// The labels of the overflow series.
const OVERFLOW: (&str, &str) = ("otel_metric_overflow", "true");

impl Appendix for Registry {
    /// Appends every bridged family, in name order.
    fn render(&self, format: TextFormat, out: &mut String) {
        self.with_families(|families| {
            for (name, family) in families {
                write_family(name, family, format, out);
            }
        });
    }

    /// The sample names of every bridged family.
    fn taken_names(&self) -> HashSet<String> {
        self.with_families(|families| {
            families
                .iter()
                .flat_map(|(name, family)| sample_names(name, family.kind.instrument_kind()))
                .collect()
        })
    }
}

fn write_family(name: &str, family: &BridgedFamily, format: TextFormat, out: &mut String) {
    if family.series.is_empty() && family.overflow.is_none() {
        return;
    }
    out.push_str(&format.header(name, &family.help, family.kind));
    for (labels, series) in &family.series {
        let pairs = || labels.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        write_series(name, family, pairs, series, format, out);
    }
    if let Some(series) = &family.overflow {
        write_series(name, family, || [OVERFLOW].into_iter(), series, format, out);
    }
}

/// One series: `name{labels,scope} value`, or a histogram's lines.
fn write_series<'a, I>(
    name: &str,
    family: &BridgedFamily,
    labels: impl Fn() -> I,
    series: &AnySeries,
    format: TextFormat,
    out: &mut String,
) where
    I: Iterator<Item = (&'a str, &'a str)>,
{
    let line = |out: &mut String, suffix: &str, le: Option<&str>| {
        out.push_str(name);
        out.push_str(suffix);
        out.push('{');
        push_label_pairs(out, labels().chain([SCOPE]));
        if let Some(le) = le {
            out.push_str("le=\"");
            out.push_str(le);
            out.push_str("\",");
        }
        out.pop();
        out.push_str("} ");
    };
    match series {
        AnySeries::Counter(c) => {
            line(out, "", None);
            push_count(out, c.value());
            out.push('\n');
        }
        AnySeries::Gauge(g) => {
            line(out, "", None);
            format.push_value(out, g.value());
            out.push('\n');
        }
        AnySeries::Histogram(h) => {
            let reading = h.read();
            let bounds = family.bounds.iter().map(|&b| format.bound(b));
            let les = bounds.chain(std::iter::once("+Inf".to_string()));
            for (le, cumulative) in les.zip(&reading.cumulative) {
                line(out, "_bucket", Some(&le));
                push_count(out, *cumulative);
                out.push('\n');
            }
            line(out, "_sum", None);
            format.push_value(out, reading.sum);
            out.push('\n');
            line(out, "_count", None);
            push_count(out, reading.cumulative.last().copied().unwrap_or(0));
            out.push('\n');
        }
    }
}
