//! What the endpoint did to stay within its limits: counts a test or an
//! operator can read ([`crate::PrometheusGuard::endpoint_stats`]), kept out
//! of the exposition (which carries exactly OpenTelemetry's families).

use std::sync::atomic::{AtomicU64, Ordering};

/// The endpoint's connection counts since it started.
///
/// ```
/// let guard = gym_metrics_prom::PrometheusBuilder::new()
///     .with_http_listener(([127, 0, 0, 1], 0))
///     .install()?;
/// let stats = guard.endpoint_stats();
/// assert!(stats.max_connections >= 1);
/// assert_eq!(stats.evicted, 0);
/// # Ok::<(), gym_metrics_prom::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EndpointStats {
    /// The most connections held at once: a quarter of the process's
    /// descriptor limit at start-up, less the endpoint's own 4, within 1..=512.
    pub max_connections: usize,
    /// Connections open now.
    pub open_connections: usize,
    /// Connections accepted (refused ones included).
    pub accepted: u64,
    /// Connections closed to make room for a new one at the cap: the oldest
    /// waiting for a request, answering a pipelined one or slow for a
    /// second, else the oldest past its first 100 ms, whatever it was
    /// doing; never one whose request waits for its password check (a new
    /// connection is never refused: it waits for room meanwhile).
    pub evicted: u64,
    /// Connections closed after 10 s without a request in progress.
    pub idle_timeouts: u64,
    /// Connections closed because an answer was not all on the socket 10 s
    /// after its request (a client reading too slowly, or not at all),
    /// however many bytes it took meanwhile.
    pub write_timeouts: u64,
    /// Connections closed after answering a request sent before the answer
    /// before it was written out (HTTP/1.1 pipelining: the endpoint answers
    /// one request at a time, and that one with `Connection: close`).
    pub pipelining_closes: u64,
    /// Failed `accept` calls (out of descriptors, aborted handshakes).
    pub accept_errors: u64,
    /// Connections closed because their TLS handshake failed (a plaintext
    /// request to the TLS port, an untrusted or missing client certificate).
    pub tls_handshake_failures: u64,
    /// Requests refused by basic auth: 401 (missing or wrong credentials)
    /// or 429 (too many waiting for a password check).
    pub auth_refusals: u64,
    /// Scrapes answered with the newest render another answer still held
    /// instead of a new one: the renders held by answers not yet read took
    /// over 8 MiB (slow or never-reading clients of a large exposition).
    pub shared_answers: u64,
}

/// The counters behind [`EndpointStats`], bumped on the endpoint's thread.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    accepted: AtomicU64,
    evicted: AtomicU64,
    idle_timeouts: AtomicU64,
    write_timeouts: AtomicU64,
    pipelining_closes: AtomicU64,
    accept_errors: AtomicU64,
    tls_handshake_failures: AtomicU64,
    auth_refusals: AtomicU64,
}

/// One of the counted events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    Accepted,
    Evicted,
    IdleTimeout,
    WriteTimeout,
    PipeliningClose,
    AcceptError,
    #[cfg_attr(not(feature = "web-config"), allow(dead_code))]
    TlsHandshakeFailed,
    #[cfg_attr(not(feature = "web-config"), allow(dead_code))]
    AuthRefused,
}

impl Counters {
    pub(crate) fn count(&self, event: Event) {
        let counter = match event {
            Event::Accepted => &self.accepted,
            Event::Evicted => &self.evicted,
            Event::IdleTimeout => &self.idle_timeouts,
            Event::WriteTimeout => &self.write_timeouts,
            Event::PipeliningClose => &self.pipelining_closes,
            Event::AcceptError => &self.accept_errors,
            Event::TlsHandshakeFailed => &self.tls_handshake_failures,
            Event::AuthRefused => &self.auth_refusals,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(
        &self,
        max_connections: usize,
        open_connections: usize,
    ) -> EndpointStats {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        EndpointStats {
            max_connections,
            open_connections,
            accepted: read(&self.accepted),
            evicted: read(&self.evicted),
            idle_timeouts: read(&self.idle_timeouts),
            write_timeouts: read(&self.write_timeouts),
            pipelining_closes: read(&self.pipelining_closes),
            accept_errors: read(&self.accept_errors),
            tls_handshake_failures: read(&self.tls_handshake_failures),
            auth_refusals: read(&self.auth_refusals),
            shared_answers: 0,
        }
    }
}
