//! The bridged families put into the exposition's model and written by its
//! one writer, after ours, in either format: each series' labels, then
//! `otel_scope_name="metrics"`, as OpenTelemetry's exporter writes a series
//! of the `metrics` scope; the overflow series last.

use std::borrow::Cow;
use std::collections::HashSet;

use super::registry::{AnySeries, BridgedFamily, Registry};
use super::series::HistogramReading;
use crate::exposition::format::TextFormat;
use crate::exposition::model::{Buckets, Family, Value};
use crate::exposition::writer::FamilyText;
use crate::exposition::LaterFamilies;
use gym_metrics_kit::naming::sample_names;

/// The instrumentation scope of every bridged series.
pub(crate) const SCOPE: (&str, &str) = ("otel_scope_name", "metrics");

/// The labels of the overflow series.
const OVERFLOW: (&str, &str) = ("otel_metric_overflow", "true");

impl LaterFamilies for Registry {
    /// Appends every bridged family, in name order.
    fn write(&self, format: TextFormat, out: &mut String) {
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

/// What a scrape reads of one series.
enum Reading {
    Count(u64),
    Float(f64),
    Histogram(HistogramReading),
}

impl Reading {
    fn of(series: &AnySeries) -> Self {
        match series {
            AnySeries::Counter(c) => Reading::Count(c.value()),
            AnySeries::Gauge(g) => Reading::Float(g.value()),
            AnySeries::Histogram(h) => Reading::Histogram(h.read()),
        }
    }

    fn value(&self) -> Value<'_> {
        match self {
            Reading::Count(n) => Value::Count(*n),
            Reading::Float(v) => Value::Float(*v),
            Reading::Histogram(h) => Value::Histogram(Buckets::Cumulative(&h.cumulative), h.sum),
        }
    }
}

fn write_family(name: &str, family: &BridgedFamily, format: TextFormat, out: &mut String) {
    if family.series.is_empty() && family.overflow.is_none() {
        return;
    }
    let model = Family {
        name: name.to_string(),
        help: Cow::Owned(family.help.clone()),
        kind: family.kind,
        labels: vec![(SCOPE.0.to_string(), SCOPE.1.to_string())],
        bounds: family.bounds.clone(),
    };
    let readings: Vec<_> = family
        .series
        .iter()
        .map(|(own, series)| (labels(own, None), Reading::of(series)))
        .chain(
            (family.overflow.iter())
                .map(|series| (labels(&[], Some(OVERFLOW)), Reading::of(series))),
        )
        .collect();
    let series = readings.iter().map(|(l, r)| (l.clone(), r.value()));
    FamilyText::new(&model, format).write(format, series, out);
}

/// A series' own labels, then `extra` (the overflow marker).
fn labels<'a>(
    own: &'a [(String, String)],
    extra: Option<(&'static str, &'static str)>,
) -> impl Iterator<Item = (&'a str, &'a str)> + Clone {
    own.iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .chain(extra)
}
