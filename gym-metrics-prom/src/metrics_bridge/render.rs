//! The bridged families as exposition text, after ours, in either format:
//! each series' labels, then `otel_scope_name="metrics"`, as OpenTelemetry's
//! exporter writes a series of the `metrics` scope; the overflow series last.

use std::collections::HashSet;

use gym_metrics_api::backend::InstrumentKind;
use gym_metrics_kit::bridge::{Bridged, Registry, Series};
use gym_metrics_kit::naming::sample_names;

use super::PromStorage;
use crate::appendix::Appendix;
use crate::families::Kind;
use crate::text_format::{push_count, push_label_pairs, TextFormat};

/// A bridged family, as the kit's registry holds it.
type BridgedFamily = Bridged<PromStorage>;

/// The instrumentation scope of every bridged series.
pub(crate) const SCOPE: (&str, &str) = ("otel_scope_name", "metrics");

/// The labels of the overflow series.
const OVERFLOW: (&str, &str) = ("otel_metric_overflow", "true");

impl Appendix for Registry<PromStorage> {
    /// Appends every bridged family, in name order.
    fn render(&self, format: TextFormat, out: &mut String) {
        self.with_instruments(|families| {
            for family in families {
                write_family(family, format, out);
            }
        });
    }

    /// The sample names of every bridged family.
    fn taken_names(&self) -> HashSet<String> {
        self.with_instruments(|families| {
            families
                .flat_map(|family| sample_names(family.family(), family.kind()))
                .collect()
        })
    }
}

fn write_family(family: &BridgedFamily, format: TextFormat, out: &mut String) {
    if family.series().is_empty() && family.overflow().is_none() {
        return;
    }
    let name = family.family();
    let kind = match family.kind() {
        InstrumentKind::Counter => Kind::Counter,
        InstrumentKind::Gauge => Kind::Gauge,
        InstrumentKind::Histogram => Kind::Histogram,
    };
    out.push_str(&format.header(name, &family.instrument().help, kind));
    for (labels, series) in family.series() {
        let pairs = || labels.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        write_series(name, family, pairs, series, format, out);
    }
    if let Some(series) = family.overflow() {
        write_series(name, family, || [OVERFLOW].into_iter(), series, format, out);
    }
}

/// One series: `name{labels,scope} value`, or a histogram's lines.
fn write_series<'a, I>(
    name: &str,
    family: &BridgedFamily,
    labels: impl Fn() -> I,
    series: &Series<PromStorage>,
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
        Series::Counter(c) => {
            line(out, "", None);
            push_count(out, c.value());
            out.push('\n');
        }
        Series::Gauge(g) => {
            line(out, "", None);
            format.push_value(out, g.value());
            out.push('\n');
        }
        Series::Histogram(h) => {
            let reading = h.read();
            let bounds = family.instrument().bounds.iter().map(|&b| format.bound(b));
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
