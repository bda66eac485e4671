//! The `gym.servers.active` value: absent until the orchestrator first sets it.

use std::sync::atomic::{AtomicU64, Ordering};

/// Marks "never set": the gauge is then absent from the scrape, as an
/// OpenTelemetry gauge without a data point is.
const UNSET: u64 = u64::MAX;

/// A last-value gauge that is absent until first set.
#[derive(Debug)]
pub(crate) struct FleetGauge(AtomicU64);

impl FleetGauge {
    pub(crate) fn new() -> Self {
        Self(AtomicU64::new(UNSET))
    }

    #[inline]
    pub(crate) fn set(&self, count: u64) {
        // u64::MAX servers is not a fleet; keep the sentinel meaningful.
        self.0.store(count.min(UNSET - 1), Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Option<u64> {
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
