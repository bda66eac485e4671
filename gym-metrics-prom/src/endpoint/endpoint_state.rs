//! What the accept loop, every connection and the guard share.

use super::connection_state::Clock;
use super::final_scrape::FinalScrapeWatch;
use super::limits::Limits;
use super::log_limiter::{LogLimiter, ONCE_A_MINUTE};
use super::registry::Registry;
use super::renders::Renders;
use super::stats::{Counters, EndpointStats};

/// One endpoint's limits, live connections, counts and rate-limited log.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) limits: Limits,
    pub(crate) clock: Clock,
    pub(crate) registry: Registry,
    pub(crate) counters: Counters,
    pub(crate) final_scrape: FinalScrapeWatch,
    /// The renders the answers hold, shared past a budget.
    pub(crate) renders: Renders,
    /// Every line a client can cause goes through it.
    pub(crate) log: LogLimiter,
    /// Basic auth on every request, when the web configuration has users.
    #[cfg(feature = "web-config")]
    pub(crate) basic_auth: Option<super::basic_auth::BasicAuth>,
}

impl Shared {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            clock: Clock::start(),
            registry: Registry::default(),
            counters: Counters::default(),
            final_scrape: FinalScrapeWatch::default(),
            renders: Renders::default(),
            log: LogLimiter::new(ONCE_A_MINUTE),
            #[cfg(feature = "web-config")]
            basic_auth: None,
        }
    }

    pub(crate) fn stats(&self) -> EndpointStats {
        let mut stats = self
            .counters
            .snapshot(self.limits.max_connections, self.registry.len());
        stats.shared_answers = self.renders.shared();
        stats
    }
}
