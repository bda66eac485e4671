//! The instrument catalogue: the one source of truth for names, kinds, units,
//! descriptions and default boundaries that every backend reads.

/// What kind of instrument a catalogue entry is.
///
/// ```
/// use gym_metrics_api::backend::{Instrument, InstrumentKind};
/// // A backend picks the instrument it creates by kind.
/// let sdk_instrument = |kind| match kind {
///     InstrumentKind::Histogram => "f64_histogram",
///     InstrumentKind::Gauge => "f64_gauge",
///     InstrumentKind::Counter => "u64_counter",
/// };
/// assert_eq!(sdk_instrument(Instrument::VERIFY_SUCCESS_RATE.kind), "f64_gauge");
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
/// use gym_metrics_api::backend::Instrument;
/// // What a backend's HELP line is made of.
/// let help = |i: Instrument| format!("{} [{}] {}", i.name, i.unit.unwrap_or("1"), i.description);
/// assert!(help(Instrument::VERIFY_DURATION).starts_with("gym.verify.duration_ms [ms] Verification"));
/// assert!(help(Instrument::VERIFY_SUCCESS_RATE).starts_with("gym.verify.success_rate [1] "));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

impl Instrument {
    /// The longest duration recorded: `u64::MAX` nanoseconds (about 584
    /// years), the most one record of the Prometheus backend's nanosecond
    /// sums holds.
    ///
    /// A longer one, like NaN, an infinity or a negative number of
    /// milliseconds, is no duration anything measured: the facade drops it
    /// whole (a verification's outcome too) and counts it in
    /// [`crate::dropped_values`], on every backend alike, and a backend
    /// called directly drops it too. So no number of records can push a
    /// histogram's `_sum` to `+Inf` or saturate it: each adds at most this.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gym_metrics_api::backend::Instrument;
    /// assert_eq!(Instrument::MAX_DURATION, Duration::from_nanos(u64::MAX));
    /// assert!(Instrument::MAX_DURATION < Duration::from_secs(585 * 365 * 86_400));
    /// ```
    pub const MAX_DURATION: std::time::Duration = std::time::Duration::from_nanos(u64::MAX);

    /// [`Instrument::MAX_DURATION`] in milliseconds (about 1.8e13), as the
    /// `Duration` entry points convert it: the largest value the `_ms`
    /// entry points take. `f64::MAX`, `1e308`, anything above this is
    /// dropped and counted, never recorded as this one.
    ///
    /// ```
    /// use gym_metrics_api::backend::Instrument;
    /// assert_eq!(Instrument::MAX_DURATION_MS, u64::MAX as f64 * 1e-6);
    /// assert_eq!(Instrument::MAX_DURATION_MS, 18_446_744_073_709.55);
    /// ```
    pub const MAX_DURATION_MS: f64 = u64::MAX as f64 * 1e-6;

    /// `gym.rollout.duration_ms`: wall time of one rollout, failed rollouts included.
    ///
    /// ```
    /// use gym_metrics_api::backend::Instrument;
    /// // The name carries the unit the backend records in: milliseconds.
    /// let unit = Instrument::ROLLOUT_DURATION.unit.expect("a histogram has a unit");
    /// assert!(Instrument::ROLLOUT_DURATION.name.ends_with(&format!("_{unit}")));
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
    /// use gym_metrics_api::backend::Instrument;
    /// // Both duration histograms share a unit, so they share the default boundaries.
    /// assert_eq!(Instrument::VERIFY_DURATION.unit, Instrument::ROLLOUT_DURATION.unit);
    /// assert_ne!(Instrument::VERIFY_DURATION.name, Instrument::ROLLOUT_DURATION.name);
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
    /// use gym_metrics_api::backend::{Instrument, InstrumentKind};
    /// // A gauge: what a backend observes under this name is a fraction (3 of 4 here),
    /// // and nothing before the first verification (never NaN).
    /// let observed = |completed: u64, succeeded: u64| {
    ///     (completed > 0).then(|| (Instrument::VERIFY_SUCCESS_RATE.name, succeeded as f64 / completed as f64))
    /// };
    /// assert_eq!(observed(4, 3), Some(("gym.verify.success_rate", 0.75)));
    /// assert_eq!(observed(0, 0), None);
    /// assert_eq!(Instrument::VERIFY_SUCCESS_RATE.kind, InstrumentKind::Gauge);
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
    /// use gym_metrics_api::backend::Instrument;
    /// use gym_metrics_api::Role;
    /// // A backend creates this gauge, at build time, only for a role that writes it.
    /// let fleet_gauge = |role: &Role| role.writes_fleet_size().then_some(Instrument::SERVERS_ACTIVE.name);
    /// assert_eq!(fleet_gauge(&Role::orchestrator()), Some("gym.servers.active"));
    /// assert_eq!(fleet_gauge(&Role::server("math-0", "resources")), None);
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
    /// windowed; with this counter and [`Self::VERIFY_SUCCEEDED`], PromQL computes a
    /// fleet-wide windowed success rate:
    /// `sum(rate(gym_verify_succeeded_total[5m])) / sum(rate(gym_verify_completed_total[5m]))`.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Instrument, InstrumentKind};
    /// assert_eq!(Instrument::VERIFY_COMPLETED.name, "gym.verify.completed");
    /// assert_eq!(Instrument::VERIFY_COMPLETED.kind, InstrumentKind::Counter);
    /// ```
    pub const VERIFY_COMPLETED: Instrument = Instrument {
        name: "gym.verify.completed",
        kind: InstrumentKind::Counter,
        unit: None,
        description: "Number of completed verifications.",
    };

    /// `gym.verify.succeeded`: verifications that succeeded (our extension; see
    /// [`Self::VERIFY_COMPLETED`]).
    ///
    /// ```
    /// use gym_metrics_api::backend::Instrument;
    /// // The two counters of one ratio: same kind, no unit.
    /// assert_eq!(Instrument::VERIFY_SUCCEEDED.kind, Instrument::VERIFY_COMPLETED.kind);
    /// assert_eq!((Instrument::VERIFY_SUCCEEDED.unit, Instrument::VERIFY_COMPLETED.unit), (None, None));
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
    /// use gym_metrics_api::backend::Instrument;
    /// assert!(!Instrument::EXPORTED.contains(&Instrument::SERVER_REQUEST_DURATION));
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
    /// [`Self::EXPORTED`]: that list holds the gym contract's attribute-free instruments.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gym_metrics_api::backend::Instrument;
    /// use gym_metrics_api::{HttpMethod, HttpServerRequest, UrlScheme};
    /// let request = HttpServerRequest::new(
    ///     HttpMethod::Get, Some("/health"), UrlScheme::Http, Some(200), Duration::from_millis(250),
    /// );
    /// // A request hands the backend its duration in this instrument's unit.
    /// assert_eq!(Instrument::HTTP_SERVER_REQUEST_DURATION.unit, Some("s"));
    /// assert_eq!(request.duration_s(), 0.25);
    /// ```
    pub const HTTP_SERVER_REQUEST_DURATION: Instrument = Instrument {
        name: "http.server.request.duration",
        kind: InstrumentKind::Histogram,
        unit: Some("s"),
        description: "Duration of HTTP server requests.",
    };

    /// The semantic conventions' advised boundaries of
    /// [`Self::HTTP_SERVER_REQUEST_DURATION`], in seconds.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Instrument, Boundaries};
    /// let b = Boundaries::new(Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S.to_vec())?;
    /// // A 40 ms request lands in the le=0.05 bucket.
    /// assert_eq!(b.as_slice()[b.bucket_index(0.040)], 0.05);
    /// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
    /// ```
    pub const HTTP_SERVER_DURATION_BOUNDARIES_S: [f64; 14] = [
        0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    ];

    /// The HTTP semantic conventions' old server metric, which
    /// OpenTelemetry's Python instrumentations emit unless
    /// `OTEL_SEMCONV_STABILITY_OPT_IN` says `http`: milliseconds, attributes
    /// `http.method`, `http.scheme`, `http.status_code` and `http.target`
    /// (the route). The backends emit it beside
    /// [`Self::HTTP_SERVER_REQUEST_DURATION`] only when that variable says
    /// `http/dup`, with [`Self::HTTP_SERVER_DURATION_OLD_BOUNDARIES_MS`].
    ///
    /// ```
    /// use gym_metrics_api::backend::Instrument;
    /// assert_eq!(Instrument::HTTP_SERVER_DURATION_OLD.name, "http.server.duration");
    /// assert_eq!(Instrument::HTTP_SERVER_DURATION_OLD.unit, Some("ms"));
    /// ```
    pub const HTTP_SERVER_DURATION_OLD: Instrument = Instrument {
        name: "http.server.duration",
        kind: InstrumentKind::Histogram,
        unit: Some("ms"),
        description: "Measures the duration of inbound HTTP requests.",
    };

    /// The boundaries, in milliseconds, of [`Self::HTTP_SERVER_DURATION_OLD`]:
    /// the OpenTelemetry SDKs' defaults, which the old metric had. Past 0,
    /// each is a thousand times one of [`Self::HTTP_SERVER_DURATION_BOUNDARIES_S`].
    ///
    /// ```
    /// use gym_metrics_api::backend::Instrument;
    /// let (old, new) = (Instrument::HTTP_SERVER_DURATION_OLD_BOUNDARIES_MS, Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S);
    /// assert!(old[1..].iter().zip(new).all(|(ms, s)| *ms == s * 1000.0));
    /// ```
    pub const HTTP_SERVER_DURATION_OLD_BOUNDARIES_MS: [f64; 15] = [
        0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0,
        7500.0, 10000.0,
    ];

    /// NeMo Gym's memory gauges (nemo-gym 0.7.0, `telemetry/memory.py`),
    /// under Gym's names, units and descriptions: per launched server (its
    /// process tree's memory, its sampled peak, its process count) and for
    /// the host. Only an orchestrator with Gym's memory profiling on
    /// exports them, as Gym's orchestrator does.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Instrument, InstrumentKind};
    /// let names: Vec<&str> = Instrument::GYM_MEMORY.iter().map(|i| i.name).collect();
    /// assert_eq!(names[0], "gym.server.memory.usage");
    /// assert!(Instrument::GYM_MEMORY.iter().all(|i| i.kind == InstrumentKind::Gauge));
    /// ```
    pub const GYM_MEMORY: [Instrument; 7] = [
        Self::memory_gauge(
            "gym.server.memory.usage",
            "By",
            "Current memory used by a Gym server and its descendants.",
        ),
        Self::memory_gauge(
            "gym.server.memory.sampled_peak",
            "By",
            "Largest sampled memory usage for a Gym server and its descendants.",
        ),
        Self::memory_gauge(
            "gym.server.processes",
            "{process}",
            "Processes currently attributed to a Gym server.",
        ),
        Self::memory_gauge("gym.host.memory.usage", "By", "Current host memory in use."),
        Self::memory_gauge(
            "gym.host.memory.available",
            "By",
            "Current host memory available without swapping.",
        ),
        Self::memory_gauge("gym.host.memory.total", "By", "Total host memory."),
        Self::memory_gauge(
            "gym.host.memory.sampled_peak",
            "By",
            "Largest sampled host memory usage.",
        ),
    ];

    const fn memory_gauge(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
    ) -> Instrument {
        Instrument {
            name,
            kind: InstrumentKind::Gauge,
            unit: Some(unit),
            description,
        }
    }

    /// Every instrument a backend exports, in a stable order.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Instrument, InstrumentKind};
    /// // A backend registers every entry; the counters are the last two.
    /// let counters: Vec<&str> = Instrument::EXPORTED
    ///     .iter()
    ///     .filter(|i| i.kind == InstrumentKind::Counter)
    ///     .map(|i| i.name)
    ///     .collect();
    /// assert_eq!(counters, ["gym.verify.completed", "gym.verify.succeeded"]);
    /// assert!(!Instrument::EXPORTED.contains(&Instrument::HTTP_SERVER_REQUEST_DURATION));
    /// ```
    pub const EXPORTED: [Instrument; 6] = [
        Self::ROLLOUT_DURATION,
        Self::VERIFY_DURATION,
        Self::VERIFY_SUCCESS_RATE,
        Self::SERVERS_ACTIVE,
        Self::VERIFY_COMPLETED,
        Self::VERIFY_SUCCEEDED,
    ];

    /// Default bucket boundaries, in milliseconds, of both duration histograms.
    ///
    /// Rollouts run from a fraction of a second to an hour; OpenTelemetry's default
    /// boundaries stop at 10 s, so ours reach 3,600,000 ms.
    ///
    /// ```
    /// use gym_metrics_api::backend::{Instrument, Boundaries};
    /// let b = Boundaries::new(Instrument::DEFAULT_DURATION_BOUNDARIES_MS.to_vec())?;
    /// // A 45-minute rollout still lands in a finite bucket (le = 1 h).
    /// assert!(b.bucket_index(45.0 * 60_000.0) < b.as_slice().len());
    /// # Ok::<(), gym_metrics_api::backend::BoundariesError>(())
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = Instrument::EXPORTED.iter().map(|i| i.name).collect();
        names.push(Instrument::SERVER_REQUEST_DURATION.name);
        names.push(Instrument::HTTP_SERVER_REQUEST_DURATION.name);
        names.push(Instrument::HTTP_SERVER_DURATION_OLD.name);
        names.extend(Instrument::GYM_MEMORY.iter().map(|i| i.name));
        let before = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), before);
    }

    #[test]
    fn default_boundaries_are_valid() {
        assert!(crate::boundaries::Boundaries::new(
            Instrument::DEFAULT_DURATION_BOUNDARIES_MS.to_vec()
        )
        .is_ok());
        assert!(crate::boundaries::Boundaries::new(
            Instrument::HTTP_SERVER_DURATION_BOUNDARIES_S.to_vec()
        )
        .is_ok());
    }

    #[test]
    fn only_histograms_have_a_unit() {
        for i in Instrument::EXPORTED {
            assert_eq!(
                i.unit.is_some(),
                i.kind == InstrumentKind::Histogram,
                "{}",
                i.name
            );
        }
    }
}
