//! gym-metrics backend (filled by its own issue).
