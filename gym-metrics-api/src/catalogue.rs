//! The instrument catalogue: the one source of truth for names, kinds, units,
//! descriptions and default boundaries that every backend reads.

/// What kind of instrument a catalogue entry is.
///
/// ```
/// use gym_metrics_api::{catalogue, InstrumentKind};
/// assert_eq!(catalogue::ROLLOUT_DURATION.kind, InstrumentKind::Histogram);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstrumentKind {
    /// A distribution of values with explicit bucket boundaries.
    Histogram,
    /// A last-value instrument.
    Gauge,
    /// A monotonic counter, cumulative since the backend was installed.
    Counter,
}

/// One instrument of the contract.
///
/// ```
/// use gym_metrics_api::catalogue;
/// let i = catalogue::VERIFY_DURATION;
/// assert_eq!((i.name, i.unit), ("gym.verify.duration_ms", Some("ms")));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Instrument {
    /// The OpenTelemetry instrument name, e.g. `gym.rollout.duration_ms`.
    pub name: &'static str,
    /// Histogram, gauge or counter.
    pub kind: InstrumentKind,
    /// The UCUM unit, or `None` for a dimensionless instrument.
    pub unit: Option<&'static str>,
    /// The description exported as HELP / description.
    pub description: &'static str,
}

/// `gym.rollout.duration_ms`: wall time of one rollout, failed rollouts included.
///
/// ```
/// assert_eq!(gym_metrics_api::catalogue::ROLLOUT_DURATION.name, "gym.rollout.duration_ms");
/// ```
pub const ROLLOUT_DURATION: Instrument = Instrument {
    name: "gym.rollout.duration_ms",
    kind: InstrumentKind::Histogram,
    unit: Some("ms"),
    description: "Rollout collection duration in milliseconds.",
};

/// `gym.verify.duration_ms`: wall time of one verification.
///
/// ```
/// assert_eq!(gym_metrics_api::catalogue::VERIFY_DURATION.unit, Some("ms"));
/// ```
pub const VERIFY_DURATION: Instrument = Instrument {
    name: "gym.verify.duration_ms",
    kind: InstrumentKind::Histogram,
    unit: Some("ms"),
    description: "Verification endpoint duration in milliseconds.",
};

/// `gym.verify.success_rate`: cumulative fraction of successful verifications
/// since the process started (not a windowed rate: use the two counters for that).
///
/// ```
/// assert_eq!(gym_metrics_api::catalogue::VERIFY_SUCCESS_RATE.unit, None);
/// ```
pub const VERIFY_SUCCESS_RATE: Instrument = Instrument {
    name: "gym.verify.success_rate",
    kind: InstrumentKind::Gauge,
    unit: None,
    description: "Fraction of successful verifications.",
};

/// `gym.servers.active`: fleet size, written by the orchestrator process only.
///
/// ```
/// use gym_metrics_api::{catalogue, InstrumentKind};
/// assert_eq!(catalogue::SERVERS_ACTIVE.kind, InstrumentKind::Gauge);
/// ```
pub const SERVERS_ACTIVE: Instrument = Instrument {
    name: "gym.servers.active",
    kind: InstrumentKind::Gauge,
    unit: None,
    description: "Number of active Gym servers.",
};

/// `gym.verify.completed`: verifications completed (our extension).
///
/// A gauge of a cumulative fraction can be neither summed across processes nor
/// windowed; with this counter and [`VERIFY_SUCCEEDED`], PromQL computes a
/// fleet-wide windowed success rate:
/// `sum(rate(gym_verify_succeeded_total[5m])) / sum(rate(gym_verify_completed_total[5m]))`.
///
/// ```
/// use gym_metrics_api::{catalogue, InstrumentKind};
/// assert_eq!(catalogue::VERIFY_COMPLETED.kind, InstrumentKind::Counter);
/// ```
pub const VERIFY_COMPLETED: Instrument = Instrument {
    name: "gym.verify.completed",
    kind: InstrumentKind::Counter,
    unit: None,
    description: "Number of completed verifications.",
};

/// `gym.verify.succeeded`: verifications that succeeded (our extension; see
/// [`VERIFY_COMPLETED`]).
///
/// ```
/// assert_eq!(gym_metrics_api::catalogue::VERIFY_SUCCEEDED.name, "gym.verify.succeeded");
/// ```
pub const VERIFY_SUCCEEDED: Instrument = Instrument {
    name: "gym.verify.succeeded",
    kind: InstrumentKind::Counter,
    unit: None,
    description: "Number of successful verifications.",
};

/// `gym.server.request_duration_ms`: **deliberately never exported**.
///
/// Without attributes it would collapse every route of every server into one
/// bucket set: `/verify` on a resources server, `/v1/responses` on a model
/// server and a liveness probe would land together and answer no question
/// anyone has. The right instrument is OpenTelemetry's
/// `http.server.request.duration`, dimensioned by `http.route`,
/// `http.request.method` and `http.response.status_code`. No API records this
/// entry; it is listed so that the decision is written down where the names are.
///
/// ```
/// use gym_metrics_api::catalogue;
/// assert!(!catalogue::EXPORTED.contains(&catalogue::SERVER_REQUEST_DURATION));
/// ```
pub const SERVER_REQUEST_DURATION: Instrument = Instrument {
    name: "gym.server.request_duration_ms",
    kind: InstrumentKind::Histogram,
    unit: Some("ms"),
    description: "Never exported: undimensioned, it would mix every route of every server.",
};

/// `http.server.request.duration`: OpenTelemetry's stable HTTP server metric,
/// in seconds, with attributes `http.request.method`, `http.route`,
/// `http.response.status_code`, `url.scheme` and `error.type` (see
/// [`crate::HttpServerRequest`] for their bounded values). Exported once a
/// server records a request (the tower layer or
/// [`crate::HttpServerRequestTimer`]), as
/// `http_server_request_duration_seconds_*` on a Prometheus scrape. Not in
/// [`EXPORTED`]: that list holds the gym contract's attribute-free instruments.
///
/// ```
/// use gym_metrics_api::catalogue;
/// assert_eq!(catalogue::HTTP_SERVER_REQUEST_DURATION.unit, Some("s"));
/// ```
pub const HTTP_SERVER_REQUEST_DURATION: Instrument = Instrument {
    name: "http.server.request.duration",
    kind: InstrumentKind::Histogram,
    unit: Some("s"),
    description: "Duration of HTTP server requests.",
};

/// The semantic conventions' advised boundaries of
/// [`HTTP_SERVER_REQUEST_DURATION`], in seconds.
///
/// ```
/// let b = gym_metrics_api::catalogue::HTTP_SERVER_DURATION_BOUNDARIES_S;
/// assert_eq!((b[0], b[b.len() - 1]), (0.005, 10.0));
/// ```
pub const HTTP_SERVER_DURATION_BOUNDARIES_S: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// Every instrument a backend exports, in a stable order.
///
/// ```
/// assert_eq!(gym_metrics_api::catalogue::EXPORTED.len(), 6);
/// ```
pub const EXPORTED: [Instrument; 6] = [
    ROLLOUT_DURATION,
    VERIFY_DURATION,
    VERIFY_SUCCESS_RATE,
    SERVERS_ACTIVE,
    VERIFY_COMPLETED,
    VERIFY_SUCCEEDED,
];

/// Default bucket boundaries, in milliseconds, of both duration histograms.
///
/// Rollouts run from a fraction of a second to an hour; OpenTelemetry's default
/// boundaries stop at 10 s, so ours reach 3,600,000 ms.
///
/// ```
/// let b = gym_metrics_api::catalogue::DEFAULT_DURATION_BOUNDARIES_MS;
/// assert_eq!((b[0], b[b.len() - 1]), (100.0, 3_600_000.0));
/// ```
pub const DEFAULT_DURATION_BOUNDARIES_MS: [f64; 15] = [
    100.0,
    250.0,
    500.0,
    1_000.0,
    2_500.0,
    5_000.0,
    10_000.0,
    30_000.0,
    60_000.0,
    120_000.0,
    300_000.0,
    600_000.0,
    1_200_000.0,
    1_800_000.0,
    3_600_000.0,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = EXPORTED.iter().map(|i| i.name).collect();
        names.push(SERVER_REQUEST_DURATION.name);
        names.push(HTTP_SERVER_REQUEST_DURATION.name);
        let before = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), before);
    }

    #[test]
    fn default_boundaries_are_valid() {
        assert!(crate::Boundaries::new(DEFAULT_DURATION_BOUNDARIES_MS.to_vec()).is_ok());
        assert!(crate::Boundaries::new(HTTP_SERVER_DURATION_BOUNDARIES_S.to_vec()).is_ok());
    }

    #[test]
    fn only_histograms_have_a_unit() {
        for i in EXPORTED {
            assert_eq!(
                i.unit.is_some(),
                i.kind == InstrumentKind::Histogram,
                "{}",
                i.name
            );
        }
    }
}
