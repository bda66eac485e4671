//! The endpoint's state: what the accept loop, every connection and the
//! guard share.

use gym_metrics_kit::log_limiter::{LogLimiter, ONCE_A_MINUTE};

use super::connections::connection_state::Clock;
use super::connections::final_scrape::FinalScrapeWatch;
use super::connections::limits::Limits;
use super::connections::live_connections::LiveConnections;
use super::connections::stats::{Counters, EndpointStats};
use super::renders::Renders;

/// One endpoint's limits, live connections, counts and rate-limited log.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) limits: Limits,
    pub(crate) clock: Clock,
    pub(crate) live_connections: LiveConnections,
    pub(crate) counters: Counters,
    pub(crate) final_scrape: FinalScrapeWatch,
    /// The renders the answers hold, shared past a budget.
    pub(crate) renders: Renders,
    /// Every line a client can cause goes through it.
    pub(crate) log: LogLimiter,
    /// Basic auth on every request, when the web configuration has users.
    #[cfg(feature = "web-config")]
    pub(crate) basic_auth: Option<super::web_security::basic_auth::BasicAuth>,
}

impl Shared {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            clock: Clock::start(),
            live_connections: LiveConnections::default(),
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
            .snapshot(self.limits.max_connections, self.live_connections.len());
        stats.shared_answers = self.renders.shared();
        stats
    }
}
