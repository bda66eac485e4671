//! The exposition: every family put into one model (`model.rs`) and
//! written by one writer (`writer.rs`) in the negotiated text format
//! (`format.rs`). Our own families (`gym.rs`, with the process's from
//! `process.rs`) come first, each one's constant text made at build time;
//! then the families of the later sources ([`LaterFamilies`]: the `metrics`
//! bridge's, an application registry's from `registry.rs`), made at each
//! scrape. `collector.rs` hands our families to a `prometheus::Registry`
//! instead.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[cfg(feature = "prometheus-collector")]
pub(crate) mod collector;
pub(crate) mod format;
pub(crate) mod gym;
pub(crate) mod model;
mod process;
#[cfg(feature = "prometheus-registry")]
pub(crate) mod registry;
pub(crate) mod writer;

use format::TextFormat;
use gym::GymFamilies;
use writer::FamilyText;

/// A source of families written after ours, through the same writer.
pub(crate) trait LaterFamilies: Send + Sync + std::fmt::Debug {
    /// Appends this source's families in `format` (without `# EOF`).
    fn write(&self, format: TextFormat, out: &mut String);

    /// Every sample name this source's families write now
    /// (`gym_metrics_kit::naming::sample_names`), so that a later source
    /// writes none of them again.
    #[allow(dead_code)] // used by optional features only
    fn taken_names(&self) -> HashSet<String> {
        HashSet::new()
    }
}

/// The constant text of one of our families in one format.
#[derive(Debug)]
enum Text {
    /// The whole family, value included: its value never changes.
    Constant(String),
    Family(FamilyText),
}

/// Renders the exposition of one process's metrics in either format.
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
    #[allow(dead_code)] // used by optional features only
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
            source.write(format, &mut out);
        }
        if format == TextFormat::OpenMetrics {
            out.push_str("# EOF\n");
        }
        self.size_hint.fetch_max(out.len(), Ordering::Relaxed);
        out
    }
}
