//! What the endpoint may hold: a number of connections derived from the
//! process's descriptor limit, how long a connection may sit idle, and how
//! long an answer may take to be written out.

use std::time::Duration;

/// The endpoint as a whole holds at most 1/`DESCRIPTOR_SHARE` of the
/// process's descriptor limit: a quarter, so that three quarters stay with the
/// host (its own server, files, children).
const DESCRIPTOR_SHARE: u64 = 4;

/// Descriptors the endpoint holds besides its connections: the listener, the
/// runtime's epoll instance and its waker, and a socket just accepted, for
/// the moment before an eviction makes room for it.
const OWN_DESCRIPTORS: u64 = 4;

/// Never more connections than this, whatever the limit: each may buffer up
/// to 64 KiB of request head, so 512 hold 32 MiB at most; a handful of
/// scrapers need a handful.
const MOST_CONNECTIONS: u64 = 512;

/// The soft limit assumed when it cannot be read (or off Unix): Linux's usual default.
const ASSUMED_DESCRIPTOR_LIMIT: u64 = 1024;

/// How long a connection may go without a request in progress. Prometheus
/// fails a scrape that takes longer than its default `scrape_timeout`,
/// 10 s, so no scrape needs a connection idle for longer; a scraper that
/// keeps connections alive between scrapes just opens a new one.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an answer may take, from its request's head to its last byte on
/// the socket (a pipelined request's: from the first request still
/// unanswered), whatever the client reads meanwhile. Prometheus gives up on
/// a scrape after its `scrape_timeout`, 10 s by default, so no scrape
/// needs longer. Not nginx's `send_timeout` (the time between two writes):
/// a client that reads 16 KiB every 8 s would restart that for ever.
const RESPONSE_DEADLINE: Duration = Duration::from_secs(10);

/// The endpoint's limits, fixed at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The soft `RLIMIT_NOFILE` they were derived from.
    pub(crate) descriptor_limit: u64,
    /// Connections held at once.
    pub(crate) max_connections: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) response_deadline: Duration,
}

impl Limits {
    /// The limits for this process's soft descriptor limit as it is now.
    pub(crate) fn for_this_process() -> Self {
        Self::for_descriptor_limit(soft_descriptor_limit())
    }

    /// The limits for a soft descriptor limit of `limit`: connections get a
    /// quarter of it less the endpoint's own descriptors (at least one, at
    /// most [`MOST_CONNECTIONS`]).
    pub(crate) fn for_descriptor_limit(limit: u64) -> Self {
        let share = limit / DESCRIPTOR_SHARE;
        let connections = share
            .saturating_sub(OWN_DESCRIPTORS)
            .clamp(1, MOST_CONNECTIONS);
        Self {
            descriptor_limit: limit,
            // At most MOST_CONNECTIONS: fits any usize.
            max_connections: usize::try_from(connections).unwrap_or(1),
            idle_timeout: IDLE_TIMEOUT,
            response_deadline: RESPONSE_DEADLINE,
        }
    }
}

/// The soft `RLIMIT_NOFILE`: the one `accept` fails against (`EMFILE`).
#[cfg(unix)]
fn soft_descriptor_limit() -> u64 {
    match rlimit::getrlimit(rlimit::Resource::NOFILE) {
        Ok((soft, _hard)) => soft,
        Err(e) => {
            log::warn!(
                target: "gym_metrics",
                "cannot read the process's descriptor limit ({e}); the metrics endpoint assumes {ASSUMED_DESCRIPTOR_LIMIT}"
            );
            ASSUMED_DESCRIPTOR_LIMIT
        }
    }
}

#[cfg(not(unix))]
fn soft_descriptor_limit() -> u64 {
    ASSUMED_DESCRIPTOR_LIMIT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_of_the_limit_less_the_endpoints_own_descriptors() {
        let cases = [
            (64, 12),
            (1024, 252),
            (4096, 512),
            (rlimit_infinity(), 512),
            (20, 1),
            (0, 1),
        ];
        for (limit, connections) in cases {
            let limits = Limits::for_descriptor_limit(limit);
            assert_eq!(limits.max_connections, connections, "limit {limit}");
            if limit >= 32 {
                let held = limits.max_connections as u64 + OWN_DESCRIPTORS;
                assert!(held <= limit / 4, "limit {limit}: {held}");
            }
        }
    }

    #[test]
    fn this_process_has_a_readable_limit() {
        let limits = Limits::for_this_process();
        assert!(limits.descriptor_limit > 0);
        assert!(limits.max_connections >= 1);
        assert_eq!(limits.idle_timeout, IDLE_TIMEOUT);
        assert_eq!(limits.response_deadline, RESPONSE_DEADLINE);
    }

    fn rlimit_infinity() -> u64 {
        u64::MAX
    }
}
