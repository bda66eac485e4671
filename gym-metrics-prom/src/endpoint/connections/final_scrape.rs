//! The wait for one last scrape at shutdown
//! ([`crate::PrometheusBuilder::final_scrape_wait`]): a scrape counts when it
//! was rendered after shutdown was asked for (so it holds everything recorded
//! before) and its last byte went to the scraper's socket.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// How the endpoint's shutdown ended (logged by the accept loop;
/// [`crate::PrometheusGuard::shutdown`] turns a missed wait into an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FinalScrape {
    /// No wait was configured: the endpoint stopped at once.
    NotAwaited,
    /// A scrape of `/metrics` rendered after shutdown was asked for was
    /// written out in full, `waited` after the request.
    Answered {
        /// From the shutdown request to the scrape's last byte.
        waited: Duration,
    },
    /// No such scrape came within the configured wait.
    TimedOut {
        /// The configured wait.
        waited: Duration,
    },
    /// The endpoint had already stopped (its thread panicked; logged).
    EndpointGone,
}

/// Armed at shutdown; told by a connection when an eligible scrape is answered.
#[derive(Debug, Default)]
pub(crate) struct FinalScrapeWatch {
    armed: AtomicBool,
    answered: Notify,
}

impl FinalScrapeWatch {
    /// From now on, a scrape rendered counts as the final one.
    pub(crate) fn arm(&self) {
        self.armed.store(true, Ordering::Release);
    }

    /// Whether a scrape rendered now would count.
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.load(Ordering::Acquire)
    }

    /// An eligible scrape was written out in full.
    pub(crate) fn answered(&self) {
        self.answered.notify_one();
    }

    /// Resolves once an eligible scrape has been answered.
    pub(crate) async fn wait_answered(&self) {
        self.answered.notified().await;
    }
}
