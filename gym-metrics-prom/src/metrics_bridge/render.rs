//! The bridged families put into the exposition's model and written by its
//! one writer, after ours, in the negotiated format: each series' labels, then
//! `otel_scope_name="metrics"`, as OpenTelemetry's exporter writes a series
//! of the `metrics` scope; the overflow series last.

use std::borrow::Cow;
use std::collections::HashSet;

use gym_metrics_api::backend::InstrumentKind;
use gym_metrics_kit::bridge::{Bridged, Instruments, Series};
use gym_metrics_kit::naming::sample_names;

use super::series::HistogramReading;
use super::PromStorage;
use crate::exposition::model::{Buckets, Family, Histogram, Kind, Value};
use crate::exposition::{LaterFamilies, Out};

/// The instrumentation scope of every bridged series.
pub(crate) const SCOPE: (&str, &str) = ("otel_scope_name", "metrics");

/// The labels of the overflow series.
const OVERFLOW: (&str, &str) = ("otel_metric_overflow", "true");

impl LaterFamilies for Instruments<PromStorage> {
    /// Appends every bridged family, in name order.
    fn write(&self, out: &mut Out<'_>) {
        self.with_instruments(|families| {
            for family in families {
                write_family(family, out);
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

/// What a scrape reads of one series.
enum Reading {
    Count(u64),
    Float(f64),
    Histogram(HistogramReading),
}

impl Reading {
    fn of(series: &Series<PromStorage>) -> Self {
        match series {
            Series::Counter(c) => Reading::Count(c.value()),
            Series::Gauge(g) => Reading::Float(g.value()),
            Series::Histogram(h) => Reading::Histogram(h.sink().read()),
        }
    }

    fn value(&self) -> Value<'_> {
        match self {
            Reading::Count(n) => Value::Count(*n),
            Reading::Float(v) => Value::Float(*v),
            Reading::Histogram(h) => Value::Histogram(Histogram {
                native: Some(&h.native),
                ..Histogram::classic(Buckets::Cumulative(&h.cumulative), h.sum)
            }),
        }
    }
}

fn write_family(family: &Bridged<PromStorage>, out: &mut Out<'_>) {
    if family.series().is_empty() && family.overflow().is_none() {
        return;
    }
    let model = Family {
        name: family.family().to_string(),
        help: Cow::Owned(family.instrument().help.clone()),
        kind: match family.kind() {
            InstrumentKind::Counter => Kind::Counter,
            InstrumentKind::Gauge => Kind::Gauge,
            InstrumentKind::Histogram => Kind::Histogram,
        },
        labels: vec![(SCOPE.0.to_string(), SCOPE.1.to_string())],
        bounds: family.instrument().bounds.clone(),
    };
    let readings: Vec<_> = family
        .series()
        .iter()
        .map(|(own, series)| (labels(own, None), Reading::of(series)))
        .chain(
            (family.overflow().into_iter())
                .map(|series| (labels(&[], Some(OVERFLOW)), Reading::of(series))),
        )
        .collect();
    let series = readings.iter().map(|(l, r)| (l.clone(), r.value()));
    out.family(&model, series);
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
