//! Families from other sources than ours (the `metrics` bridge, an
//! application's own registry, process metrics), written after ours in the
//! same exposition, in the format the scrape negotiated.

use std::collections::HashSet;

use crate::text_format::TextFormat;

/// A source of families written after the gym families.
pub(crate) trait Appendix: Send + Sync + std::fmt::Debug {
    /// Appends this source's families in `format` (without `# EOF`).
    fn render(&self, format: TextFormat, out: &mut String);

    /// Every sample name this source's families write now
    /// (`gym_metrics_kit::naming::sample_names`), so that a later source writes none
    /// of them again.
    #[allow(dead_code)] // used by optional features only
    fn taken_names(&self) -> HashSet<String> {
        HashSet::new()
    }
}
