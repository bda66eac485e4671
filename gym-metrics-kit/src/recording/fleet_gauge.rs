//! The `gym.servers.active` value: absent until the orchestrator first sets it.

use std::sync::atomic::{AtomicU64, Ordering};

/// Marks "never set": the gauge is then absent from the scrape, as an
/// OpenTelemetry gauge without a data point is.
const UNSET: u64 = u64::MAX;

/// A last-value gauge that is absent until first set.
///
/// ```
/// let g = gym_metrics_kit::recording::FleetGauge::new();
/// assert_eq!(g.get(), None);
/// g.set(12);
/// assert_eq!(g.get(), Some(12));
/// ```
#[derive(Debug)]
pub struct FleetGauge(AtomicU64);

impl FleetGauge {
    /// A gauge never set: [`FleetGauge::get`] is `None`.
    ///
    /// ```
    /// assert_eq!(gym_metrics_kit::recording::FleetGauge::new().get(), None);
    /// ```
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self(AtomicU64::new(UNSET))
    }

    /// The fleet's size now (`u64::MAX` reads as `u64::MAX - 1`).
    ///
    /// ```
    /// let g = gym_metrics_kit::recording::FleetGauge::new();
    /// g.set(3);
    /// g.set(0);
    /// assert_eq!(g.get(), Some(0));
    /// ```
    #[inline]
    pub fn set(&self, count: u64) {
        // u64::MAX servers is not a fleet; keep the sentinel meaningful.
        self.0.store(count.min(UNSET - 1), Ordering::Relaxed);
    }

    /// The last size set, `None` before the first.
    ///
    /// ```
    /// let g = gym_metrics_kit::recording::FleetGauge::new();
    /// g.set(u64::MAX);
    /// assert_eq!(g.get(), Some(u64::MAX - 1));
    /// ```
    pub fn get(&self) -> Option<u64> {
        let value = self.0.load(Ordering::Relaxed);
        (value != UNSET).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_until_set_then_last_value() {
        let g = FleetGauge::new();
        assert_eq!(g.get(), None);
        g.set(4);
        g.set(3);
        assert_eq!(g.get(), Some(3));
        g.set(0);
        assert_eq!(g.get(), Some(0));
    }
}
