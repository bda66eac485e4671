//! The exposition: every family put into one model (`model.rs`) and
//! written in the negotiated format: by one writer (`writer.rs`) in either
//! text format (`format.rs`), or as protobuf (`protobuf.rs`). Our own families (`gym.rs`, with the process's from
//! `process.rs`) come first, each one's constant text made at build time;
//! then the families of the later sources ([`LaterFamilies`]: Gym's memory
//! gauges from `memory.rs`, the `metrics` bridge's, an application
//! registry's from `app_registry.rs`), made at each
//! scrape. `collector.rs` hands our families to a `prometheus::Registry`
//! instead.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[cfg(feature = "prometheus-registry")]
pub(crate) mod app_registry;
#[cfg(feature = "prometheus-collector")]
pub(crate) mod collector;
pub(crate) mod format;
pub(crate) mod gym;
mod http_server_duration;
pub(crate) mod memory;
pub(crate) mod model;
mod process;
pub(crate) mod protobuf;
pub(crate) mod writer;

use format::TextFormat;
use gym::GymFamilies;
use model::{Family, Value};
use writer::FamilyText;

/// A source of families written after ours, in the same format.
pub(crate) trait LaterFamilies: Send + Sync + std::fmt::Debug {
    /// Appends this source's families to `out` (without `# EOF`).
    fn write(&self, out: &mut Out<'_>);

    /// Every sample name this source's families write now
    /// (`gym_metrics_kit::naming::sample_names`), so that a later source
    /// writes none of them again.
    #[allow(dead_code)] // used by optional features only
    fn taken_names(&self) -> HashSet<String> {
        HashSet::new()
    }
}

/// Where a family is written: a text format's output, or the protobuf one.
pub(crate) enum Out<'o> {
    Text(TextFormat, &'o mut String),
    Protobuf(&'o mut Vec<u8>),
}

impl Out<'_> {
    /// Appends `family` showing `series`, each its own labels and its value.
    pub(crate) fn family<'l, 'v, L>(
        &mut self,
        family: &Family,
        series: impl IntoIterator<Item = (L, Value<'v>)>,
    ) where
        L: Iterator<Item = (&'l str, &'l str)> + Clone,
    {
        match self {
            Out::Text(format, out) => FamilyText::new(family, *format).write(*format, series, out),
            Out::Protobuf(out) => protobuf::write(family, series, out),
        }
    }
}

/// The constant text of one of our families in one format.
#[derive(Debug)]
enum Text {
    /// The whole family, value included: its value never changes.
    Constant(String),
    Family(FamilyText),
}

/// Renders the exposition of one process's metrics in any format.
#[derive(Debug)]
pub(crate) struct Exposition {
    families: Arc<GymFamilies>,
    /// The constant text of each family, in the families' order.
    prometheus: Vec<Text>,
    openmetrics: Vec<Text>,
    /// The longest exposition written so far: the next buffer's capacity.
    size_hint: AtomicUsize,
    /// Families of other sources, written after ours in this order.
    later: Vec<Arc<dyn LaterFamilies>>,
}

impl Exposition {
    pub(crate) fn new(families: Arc<GymFamilies>) -> Self {
        let texts = |format| {
            families
                .iter()
                .map(|f| {
                    let text = FamilyText::new(&f.family, format);
                    match f.constant() {
                        Some(sample) => {
                            let mut out = String::new();
                            text.write(format, sample.series(), &mut out);
                            Text::Constant(out)
                        }
                        None => Text::Family(text),
                    }
                })
                .collect()
        };
        Self {
            prometheus: texts(TextFormat::Prometheus),
            openmetrics: texts(TextFormat::OpenMetrics),
            families,
            size_hint: AtomicUsize::new(0),
            later: Vec::new(),
        }
    }

    /// Our families (the collector's).
    #[cfg(feature = "prometheus-collector")]
    pub(crate) fn families(&self) -> &Arc<GymFamilies> {
        &self.families
    }

    /// This exposition with `source`'s families written after ours (and
    /// after those of earlier sources).
    pub(crate) fn with_later(mut self, source: Arc<dyn LaterFamilies>) -> Self {
        self.later.push(source);
        self
    }

    /// The sources written after ours so far, in order.
    #[allow(dead_code)] // used by optional features only
    pub(crate) fn later(&self) -> &[Arc<dyn LaterFamilies>] {
        &self.later
    }

    /// The current exposition in `format`.
    pub(crate) fn render(&self, format: TextFormat) -> String {
        let texts = match format {
            TextFormat::Prometheus => &self.prometheus,
            TextFormat::OpenMetrics => &self.openmetrics,
        };
        let readings = self.families.read();
        let mut out = String::with_capacity(self.size_hint.load(Ordering::Relaxed));
        for (family, text) in self.families.iter().zip(texts) {
            match text {
                Text::Constant(text) => out.push_str(text),
                Text::Family(text) => {
                    if let Some(sample) = family.sample(&readings) {
                        text.write(format, sample.series(), &mut out);
                    }
                }
            }
        }
        for source in &self.later {
            source.write(&mut Out::Text(format, &mut out));
        }
        if format == TextFormat::OpenMetrics {
            out.push_str("# EOF\n");
        }
        self.size_hint.fetch_max(out.len(), Ordering::Relaxed);
        out
    }

    /// The current exposition as protobuf.
    pub(crate) fn render_protobuf(&self) -> Vec<u8> {
        let readings = self.families.read();
        let mut out = Vec::with_capacity(self.size_hint.load(Ordering::Relaxed));
        for family in self.families.iter() {
            if let Some(sample) = family.sample(&readings) {
                protobuf::write(&family.family, sample.series(), &mut out);
            }
        }
        for source in &self.later {
            source.write(&mut Out::Protobuf(&mut out));
        }
        out
    }
}
