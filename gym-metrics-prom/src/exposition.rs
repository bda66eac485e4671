//! The exposition, written straight from the shard sums into one buffer.
//!
//! The families and what each shows are the model's (`families.rs`); here
//! each family's constant text (HELP and TYPE lines, names, label sets, each
//! bucket's `le` label, the whole `target_info` family) is rendered once, at
//! build time, for each format, and a scrape appends the values between
//! those pieces.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::appendix::Appendix;
use crate::families::{Families, Family, GatheredSeries, Kind, Sample, Shape};
use crate::readings::HttpSeries;
use crate::text_format::{label_set, push_count, push_label_pairs, TextFormat};

/// Renders the exposition of one process's metrics in either format.
#[derive(Debug)]
pub(crate) struct Exposition {
    families: Arc<Families>,
    /// The constant text of each family, in the families' order.
    prometheus: Vec<Lines>,
    openmetrics: Vec<Lines>,
    /// The longest exposition written so far: the next buffer's capacity.
    size_hint: AtomicUsize,
    /// Families of other sources, written after ours in this order.
    appendices: Vec<Arc<dyn Appendix>>,
}

impl Exposition {
    pub(crate) fn new(families: Arc<Families>) -> Self {
        let lines = |format| families.iter().map(|f| Lines::new(f, format)).collect();
        Self {
            prometheus: lines(TextFormat::Prometheus),
            openmetrics: lines(TextFormat::OpenMetrics),
            families,
            size_hint: AtomicUsize::new(0),
            appendices: Vec::new(),
        }
    }

    /// This exposition with `appendix`'s families written after ours (and
    /// after those of earlier appendices).
    #[allow(dead_code)] // used by optional features only
    pub(crate) fn with_appendix(mut self, appendix: Arc<dyn Appendix>) -> Self {
        self.appendices.push(appendix);
        self
    }

    /// The sources written after ours so far, in order.
    #[allow(dead_code)] // used by optional features only
    pub(crate) fn appendices(&self) -> &[Arc<dyn Appendix>] {
        &self.appendices
    }

    /// The families this exposition writes (the collector's too).
    #[cfg(feature = "prometheus-collector")]
    pub(crate) fn families(&self) -> &Arc<Families> {
        &self.families
    }

    /// The current exposition in `format`.
    pub(crate) fn render(&self, format: TextFormat) -> String {
        let lines = match format {
            TextFormat::Prometheus => &self.prometheus,
            TextFormat::OpenMetrics => &self.openmetrics,
        };
        let readings = self.families.read();
        let mut out = String::with_capacity(self.size_hint.load(Ordering::Relaxed));
        for (family, lines) in self.families.iter().zip(lines) {
            if let Some(sample) = family.sample(&readings) {
                lines.write(format, sample, &mut out);
            }
        }
        for appendix in &self.appendices {
            appendix.render(format, &mut out);
        }
        if format == TextFormat::OpenMetrics {
            out.push_str("# EOF\n");
        }
        self.size_hint.fetch_max(out.len(), Ordering::Relaxed);
        out
    }
}

/// Appends `family`, known only at scrape time (an application registry's),
/// showing `series`: the same lines as ours, made for this scrape.
#[allow(dead_code)] // used by optional features only
pub(crate) fn write_gathered(
    family: &Family,
    series: &[GatheredSeries],
    format: TextFormat,
    out: &mut String,
) {
    Lines::new(family, format).write(format, Sample::Gathered(series), out);
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

/// The constant text of one family in one format.
#[derive(Debug)]
enum Lines {
    /// The whole family, value included: its value never changes.
    Constant(String),
    /// [`Shape::Single`].
    Single {
        header: String,
        /// `name{labels} `.
        prefix: String,
    },
    /// [`Shape::Histogram`].
    Histogram {
        header: String,
        /// `name_bucket{labels,le="bound"} `, the last one `+Inf`.
        buckets: Vec<String>,
        /// `name_sum{labels} `.
        sum: String,
        /// `name_count{labels} `.
        count: String,
    },
    /// [`Shape::HistogramSeries`].
    Series(SeriesLines),
    /// [`Shape::ValueSeries`].
    Values { header: String, name: String },
}

/// The constant text of a [`Shape::HistogramSeries`] family; a series
/// writes its own labels between a name and a tail.
#[derive(Debug)]
struct SeriesLines {
    header: String,
    /// `name_bucket{`, `name_sum{`, `name_count{`.
    bucket_name: String,
    sum_name: String,
    count_name: String,
    /// `labels,le="bound"} `, the last one `+Inf`.
    bucket_tails: Vec<String>,
    /// `labels} `.
    tail: String,
}

impl Lines {
    fn new(family: &Family, format: TextFormat) -> Self {
        let name = &sample_name(family, format);
        let header = format.header(name, &family.help, family.kind);
        let labels = || family.labels.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        let lines = match family.shape() {
            Shape::Single => Lines::Single {
                header,
                prefix: format!("{name}{} ", label_set(labels())),
            },
            Shape::Histogram => {
                let set = label_set(labels());
                let buckets = le_values(&family.bounds, format)
                    .map(|le| {
                        let mut line = format!("{name}_bucket{{");
                        push_label_pairs(&mut line, labels());
                        line.push_str(&format!("le=\"{le}\"}} "));
                        line
                    })
                    .collect();
                Lines::Histogram {
                    header,
                    buckets,
                    sum: format!("{name}_sum{set} "),
                    count: format!("{name}_count{set} "),
                }
            }
            Shape::HistogramSeries => {
                let mut pairs = String::new();
                push_label_pairs(&mut pairs, labels());
                let bucket_tails = le_values(&family.bounds, format)
                    .map(|le| format!("{pairs}le=\"{le}\"}} "))
                    .collect();
                pairs.pop();
                Lines::Series(SeriesLines {
                    header,
                    bucket_name: format!("{name}_bucket{{"),
                    sum_name: format!("{name}_sum{{"),
                    count_name: format!("{name}_count{{"),
                    bucket_tails,
                    tail: format!("{pairs}}} "),
                })
            }
            Shape::ValueSeries => Lines::Values {
                header,
                name: name.clone(),
            },
        };
        match family.constant() {
            Some(value) => {
                let mut text = String::new();
                lines.write(format, value, &mut text);
                Lines::Constant(text)
            }
            None => lines,
        }
    }

    /// Appends the family showing `sample`. Both come from the same
    /// [`Family`], so their shapes match.
    fn write(&self, format: TextFormat, sample: Sample<'_>, out: &mut String) {
        match (self, sample) {
            (Lines::Constant(text), _) => out.push_str(text),
            (Lines::Single { header, prefix }, Sample::Value(v)) => {
                out.push_str(header);
                out.push_str(prefix);
                format.push_value(out, v);
                out.push('\n');
            }
            (Lines::Single { header, prefix }, Sample::Count(n)) => {
                out.push_str(header);
                out.push_str(prefix);
                push_count(out, n);
                out.push('\n');
            }
            (
                Lines::Histogram {
                    header,
                    buckets,
                    sum,
                    count,
                },
                Sample::Histogram(snapshot, total),
            ) => {
                out.push_str(header);
                for (prefix, cumulative) in buckets.iter().zip(snapshot.cumulative_counts()) {
                    out.push_str(prefix);
                    push_count(out, cumulative);
                    out.push('\n');
                }
                out.push_str(sum);
                format.push_value(out, snapshot.sum);
                out.push('\n');
                out.push_str(count);
                push_count(out, total);
                out.push('\n');
            }
            (Lines::Series(lines), Sample::Series(series)) => lines.write(format, series, out),
            (Lines::Series(lines), Sample::Gathered(series)) => lines.write(format, series, out),
            (Lines::Values { header, name }, Sample::Gathered(series)) => {
                out.push_str(header);
                for s in series {
                    out.push_str(name);
                    out.push_str(&label_set(
                        s.labels.iter().map(|(n, v)| (n.as_str(), v.as_str())),
                    ));
                    out.push(' ');
                    format.push_value(out, s.value);
                    out.push('\n');
                }
            }
            // A family's lines and its sample share its shape: not reached.
            _ => {}
        }
    }
}

/// One histogram series as [`SeriesLines`] writes it: ours (the HTTP
/// histogram's) or an application registry's.
trait HistogramSeriesView {
    /// The series' own labels, before the family's.
    fn label_pairs(&self) -> impl Iterator<Item = (&str, &str)> + '_;
    /// Running totals per bound, then the `+Inf` one.
    fn cumulative_counts(&self) -> impl Iterator<Item = u64> + '_;
    fn sum(&self) -> f64;
    fn count(&self) -> u64;
}

impl HistogramSeriesView for HttpSeries {
    fn label_pairs(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.0.iter().copied()
    }
    fn cumulative_counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.1.cumulative_counts()
    }
    fn sum(&self) -> f64 {
        self.1.sum
    }
    fn count(&self) -> u64 {
        self.1.count()
    }
}

impl HistogramSeriesView for GatheredSeries {
    fn label_pairs(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.labels.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
    fn cumulative_counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.cumulative.iter().copied()
    }
    fn sum(&self) -> f64 {
        self.value
    }
    fn count(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

impl SeriesLines {
    fn write(&self, format: TextFormat, series: &[impl HistogramSeriesView], out: &mut String) {
        out.push_str(&self.header);
        for s in series {
            for (tail, cumulative) in self.bucket_tails.iter().zip(s.cumulative_counts()) {
                out.push_str(&self.bucket_name);
                push_label_pairs(out, s.label_pairs());
                out.push_str(tail);
                push_count(out, cumulative);
                out.push('\n');
            }
            out.push_str(&self.sum_name);
            push_label_pairs(out, s.label_pairs());
            self.close(out);
            format.push_value(out, s.sum());
            out.push('\n');
            out.push_str(&self.count_name);
            push_label_pairs(out, s.label_pairs());
            self.close(out);
            push_count(out, s.count());
            out.push('\n');
        }
    }

    /// Closes a `_sum` or `_count` label set after the series' labels: a
    /// family without labels of its own (an application registry's) drops
    /// the series' last `,`, or the whole empty set, as `TextEncoder` does.
    #[inline(always)]
    fn close(&self, out: &mut String) {
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

/// Each bound's `le` value, then `+Inf`.
fn le_values(bounds: &[f64], format: TextFormat) -> impl Iterator<Item = String> + '_ {
    bounds
        .iter()
        .map(move |&b| format.bound(b))
        .chain(std::iter::once("+Inf".to_string()))
}
