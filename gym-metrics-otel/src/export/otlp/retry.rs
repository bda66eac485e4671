//! The retry policy of every OTLP sender, written once (issue 41 §2): only
//! the answers the OTLP exporter specification calls retryable are tried
//! again, with exponential backoff and jitter, honouring the collector's
//! requested delay (`Retry-After`, gRPC `RetryInfo`), and the whole export,
//! first try included, stays within the export timeout.
//!
//! - Retryable: HTTP 429, 502, 503, 504; gRPC `CANCELLED`,
//!   `DEADLINE_EXCEEDED`, `ABORTED`, `OUT_OF_RANGE`, `UNAVAILABLE`,
//!   `DATA_LOSS`, and `RESOURCE_EXHAUSTED` only when the status carries a
//!   `google.rpc.RetryInfo` (the specification: the server says it may
//!   recover). Everything else (400, 401, 403, 404, 500, a redirect,
//!   `INVALID_ARGUMENT`, a refused connection over HTTP, a timeout) fails at
//!   once: the next periodic export carries the cumulative totals anyway.
//! - The wait before retry `n` (1, 2, …) is [`INITIAL_BACKOFF`] ×
//!   [`MULTIPLIER`]^(n−1), at most [`MAX_BACKOFF`], times a uniform jitter
//!   in [1 − [`JITTER`], 1 + [`JITTER`]); at most [`MAX_ATTEMPTS`] attempts.
//! - A delay the collector asks for (`Retry-After` in delta-seconds or as an
//!   HTTP-date, `RetryInfo.retry_delay`) replaces the backoff when it is
//!   usable: not negative, not garbage, not a date in the past, and at most
//!   [`MAX_SERVER_DELAY`]. An unusable one falls back to the backoff.
//! - Never past the timeout: each attempt gets only the time left of the
//!   export's timeout; a wait the collector asked for that would leave less
//!   than [`MIN_ATTEMPT_TIME`] ends the export at once (not retried sooner
//!   than asked), and the backoff is cut to leave that much.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

/// The wait before the first retry, before jitter.
pub(crate) const INITIAL_BACKOFF: Duration = Duration::from_millis(100);
/// Each further retry waits this many times longer, before jitter.
pub(crate) const MULTIPLIER: u32 = 2;
/// The longest backoff, before jitter.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The jitter: each backoff is scaled by a uniform factor in
/// [1 − `JITTER`, 1 + `JITTER`).
pub(crate) const JITTER: f64 = 0.5;
/// Attempts in one export, the first included.
pub(crate) const MAX_ATTEMPTS: u32 = 5;
/// The longest delay a collector may ask for and be believed; a longer one
/// (`Retry-After: 3600`) falls back to the backoff.
pub(crate) const MAX_SERVER_DELAY: Duration = Duration::from_secs(60);
/// The least time a retry must have left before the export's timeout.
pub(crate) const MIN_ATTEMPT_TIME: Duration = Duration::from_millis(50);

/// What one attempt to send came to.
#[derive(Debug)]
pub(crate) enum Attempt<T> {
    /// The collector accepted the request.
    Accepted(T),
    /// Failed for good (not retryable): the error to report.
    Failed(String),
    /// A retryable answer, with the delay the collector asked for, if it
    /// asked for one that could be read.
    Retryable {
        error: String,
        server_delay: Option<Duration>,
    },
}

/// Runs `attempt` (given the time left of `timeout`) until it is accepted,
/// fails for good, or the policy allows no further retry; the whole stays
/// within `timeout` (as long as each attempt keeps to the time it is given).
///
/// # Errors
/// The last attempt's error; after a retry, with how many attempts were made.
pub(crate) fn run<T>(
    timeout: Duration,
    mut attempt: impl FnMut(Duration) -> Attempt<T>,
) -> Result<T, String> {
    let start = Instant::now();
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let left = timeout.saturating_sub(start.elapsed());
        let (error, server_delay) = match attempt(left) {
            Attempt::Accepted(value) => return Ok(value),
            Attempt::Failed(error) if attempts == 1 => return Err(error),
            Attempt::Failed(error) => {
                return Err(format!("{error} (attempt {attempts}, not retryable)"));
            }
            Attempt::Retryable {
                error,
                server_delay,
            } => (error, server_delay),
        };
        let left = timeout.saturating_sub(start.elapsed());
        match next_wait(attempts, server_delay, left, unit_random()) {
            Some(wait) => std::thread::sleep(wait),
            None => {
                return Err(format!(
                    "{error} ({attempts} attempt(s) in {} ms; no further retry within the \
                     export timeout of {} ms)",
                    start.elapsed().as_millis(),
                    timeout.as_millis()
                ));
            }
        }
    }
}

/// The wait before the next attempt after `attempts` attempts, with `left`
/// of the export's timeout and `unit` a number in [0, 1) drawn for the
/// jitter; `None`: no further attempt.
pub(crate) fn next_wait(
    attempts: u32,
    server_delay: Option<Duration>,
    left: Duration,
    unit: f64,
) -> Option<Duration> {
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let budget = left.checked_sub(MIN_ATTEMPT_TIME)?;
    match server_delay.filter(|d| *d <= MAX_SERVER_DELAY) {
        // Asked for: honoured, or not retried at all (never sooner).
        Some(delay) => (delay <= budget).then_some(delay),
        None => Some(backoff(attempts, unit).min(budget)),
    }
}

/// The jittered backoff before retry number `retry` (1 for the first).
pub(crate) fn backoff(retry: u32, unit: f64) -> Duration {
    let doublings = retry.saturating_sub(1).min(16);
    let base = INITIAL_BACKOFF
        .saturating_mul(MULTIPLIER.saturating_pow(doublings))
        .min(MAX_BACKOFF);
    let unit = unit.clamp(0.0, 1.0);
    base.mul_f64(1.0 - JITTER + 2.0 * JITTER * unit)
}

/// A number in [0, 1) for the jitter: std's randomly keyed hasher (keys
/// fresh for each `RandomState`) over the current instant; no crate needed,
/// and jitter needs no cryptographic quality.
fn unit_random() -> f64 {
    let bits = RandomState::new().hash_one(Instant::now()) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// Whether an HTTP status is one the specification retries: 429, 502, 503, 504.
#[cfg(any(feature = "http-proto", feature = "http-json"))]
pub(crate) fn http_status_retryable(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

/// A `Retry-After` value as a delay from `now`: delta-seconds (digits
/// only) or an HTTP-date in the future. `None` for anything else (garbage,
/// a negative number, a date in the past), which falls back to the backoff.
#[cfg(any(feature = "http-proto", feature = "http-json"))]
pub(crate) fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for a u64 is as unusable as a huge value.
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    at.duration_since(now).ok().filter(|d| !d.is_zero())
}

/// What a gRPC status comes to: retryable or not, and the delay its
/// `RetryInfo` asks for.
#[cfg(feature = "grpc")]
pub(crate) fn grpc_retryable(status: &tonic::Status) -> Option<Option<Duration>> {
    let retry_info = grpc_status::retry_info(status.details());
    match status.code() {
        // The OTLP/gRPC specification's retryable codes.
        tonic::Code::Cancelled
        | tonic::Code::DeadlineExceeded
        | tonic::Code::Aborted
        | tonic::Code::OutOfRange
        | tonic::Code::Unavailable
        | tonic::Code::DataLoss => Some(retry_info.flatten()),
        // Only a status with RetryInfo: the server says it may recover.
        tonic::Code::ResourceExhausted => retry_info,
        _ => None,
    }
}

/// `google.rpc.Status` and `google.rpc.RetryInfo`, the few fields read of
/// them, decoded with prost (no `tonic-types` needed).
#[cfg(feature = "grpc")]
mod grpc_status {
    use std::time::Duration;

    use prost::Message;

    /// The type URL of `google.rpc.RetryInfo` in a status's details.
    const RETRY_INFO: &str = "type.googleapis.com/google.rpc.RetryInfo";

    /// `google.rpc.Status`: only its details.
    #[derive(Clone, PartialEq, Message)]
    struct RpcStatus {
        #[prost(message, repeated, tag = "3")]
        details: Vec<Any>,
    }

    /// `google.protobuf.Any`.
    #[derive(Clone, PartialEq, Message)]
    struct Any {
        #[prost(string, tag = "1")]
        type_url: String,
        #[prost(bytes = "vec", tag = "2")]
        value: Vec<u8>,
    }

    /// `google.rpc.RetryInfo`.
    #[derive(Clone, PartialEq, Message)]
    struct RetryInfo {
        #[prost(message, optional, tag = "1")]
        retry_delay: Option<ProtoDuration>,
    }

    /// `google.protobuf.Duration`.
    #[derive(Clone, PartialEq, Message)]
    struct ProtoDuration {
        #[prost(int64, tag = "1")]
        seconds: i64,
        #[prost(int32, tag = "2")]
        nanos: i32,
    }

    /// `None`: the details (`grpc-status-details-bin`) hold no RetryInfo;
    /// `Some(delay)`: they do, with its delay when that is a usable one
    /// (present and not negative).
    pub(super) fn retry_info(details: &[u8]) -> Option<Option<Duration>> {
        let status = RpcStatus::decode(details).ok()?;
        let any = status.details.iter().find(|a| a.type_url == RETRY_INFO)?;
        let info = RetryInfo::decode(any.value.as_slice()).ok()?;
        Some(info.retry_delay.and_then(|d| {
            let seconds = u64::try_from(d.seconds).ok()?;
            let nanos = u32::try_from(d.nanos).ok().filter(|n| *n < 1_000_000_000)?;
            Some(Duration::new(seconds, nanos))
        }))
    }

    #[cfg(test)]
    pub(super) fn encode(delay: Option<(i64, i32)>, type_url: &str) -> Vec<u8> {
        let info = RetryInfo {
            retry_delay: delay.map(|(seconds, nanos)| ProtoDuration { seconds, nanos }),
        };
        RpcStatus {
            details: vec![Any {
                type_url: type_url.to_string(),
                value: info.encode_to_vec(),
            }],
        }
        .encode_to_vec()
    }

    #[cfg(test)]
    pub(super) const RETRY_INFO_URL: &str = RETRY_INFO;
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn backoff_doubles_from_100_ms_with_half_jitter_and_a_cap() {
        assert_eq!(backoff(1, 0.0), MS(50));
        assert_eq!(backoff(1, 0.5), MS(100));
        assert!(backoff(1, 0.999_999) < MS(150));
        assert_eq!(backoff(2, 0.5), MS(200));
        assert_eq!(backoff(3, 0.5), MS(400));
        assert_eq!(backoff(4, 0.5), MS(800));
        assert_eq!(backoff(20, 0.5), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX, 1.0), MAX_BACKOFF.mul_f64(1.5));
        for _ in 0..1000 {
            let u = unit_random();
            assert!((0.0..1.0).contains(&u), "{u}");
        }
    }

    #[test]
    fn a_usable_server_delay_is_honoured_or_not_retried() {
        let left = Duration::from_secs(3);
        assert_eq!(
            next_wait(1, Some(Duration::from_secs(1)), left, 0.5),
            Some(Duration::from_secs(1))
        );
        // It would leave no time for the attempt: no retry, never sooner.
        assert_eq!(
            next_wait(1, Some(Duration::from_secs(1)), MS(900), 0.5),
            None
        );
        // Too long to believe: the backoff instead.
        assert_eq!(
            next_wait(1, Some(Duration::from_secs(3600)), left, 0.5),
            Some(MS(100))
        );
    }

    #[test]
    fn the_backoff_is_cut_to_the_time_left_and_attempts_are_bounded() {
        assert_eq!(next_wait(3, None, MS(250), 0.5), Some(MS(200)));
        assert_eq!(next_wait(1, None, MS(40), 0.5), None);
        assert_eq!(
            next_wait(MAX_ATTEMPTS, None, Duration::from_secs(60), 0.5),
            None
        );
        assert!(next_wait(MAX_ATTEMPTS - 1, None, Duration::from_secs(60), 0.5).is_some());
    }

    #[test]
    fn run_retries_only_what_is_retryable_and_keeps_to_the_timeout() {
        let mut calls = 0;
        let r = run(Duration::from_secs(2), |_| {
            calls += 1;
            if calls < 3 {
                Attempt::Retryable {
                    error: "503".into(),
                    server_delay: None,
                }
            } else {
                Attempt::Accepted(calls)
            }
        });
        assert_eq!(r, Ok(3));
        let mut calls = 0;
        let r: Result<(), _> = run(Duration::from_secs(2), |_| {
            calls += 1;
            Attempt::Failed("500".into())
        });
        assert_eq!((r, calls), (Err("500".to_string()), 1));
        let start = Instant::now();
        let timeout = MS(400);
        let mut lefts = Vec::new();
        let r: Result<(), _> = run(timeout, |left| {
            lefts.push(left);
            Attempt::Retryable {
                error: "429".into(),
                server_delay: Some(Duration::from_secs(3600)),
            }
        });
        assert!(start.elapsed() < timeout + MS(30), "{:?}", start.elapsed());
        assert!(
            lefts.len() >= 2 && lefts.iter().all(|l| *l <= timeout),
            "{lefts:?}"
        );
        assert!(r.unwrap_err().contains("no further retry"));
    }

    #[cfg(any(feature = "http-proto", feature = "http-json"))]
    #[test]
    fn retry_after_is_delta_seconds_or_a_future_http_date() {
        use std::time::SystemTime;
        let now = SystemTime::now();
        assert_eq!(parse_retry_after(" 1 ", now), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("3600", now),
            Some(Duration::from_secs(3600))
        );
        for bad in ["-5", "1.5", "", "soon", "99999999999999999999999", "+1"] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad}");
        }
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        let got = parse_retry_after(&later, now).unwrap();
        assert!(
            got > Duration::from_secs(28) && got <= Duration::from_secs(30),
            "{got:?}"
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            None
        );
        assert!([429, 502, 503, 504].into_iter().all(http_status_retryable));
        assert!(![400, 401, 403, 404, 500, 501, 307]
            .into_iter()
            .any(http_status_retryable));
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn resource_exhausted_is_retried_only_with_retry_info() {
        use tonic::{Code, Status};
        let info = grpc_status::encode(Some((2, 500_000_000)), grpc_status::RETRY_INFO_URL);
        let with = |code, details: &[u8]| Status::with_details(code, "x", bytes_of(details));
        assert_eq!(
            grpc_retryable(&with(Code::ResourceExhausted, &info)),
            Some(Some(MS(2500)))
        );
        assert_eq!(grpc_retryable(&Status::resource_exhausted("x")), None);
        let other = grpc_status::encode(Some((2, 0)), "type.googleapis.com/google.rpc.DebugInfo");
        assert_eq!(grpc_retryable(&with(Code::ResourceExhausted, &other)), None);
        let negative = grpc_status::encode(Some((-2, 0)), grpc_status::RETRY_INFO_URL);
        assert_eq!(
            grpc_retryable(&with(Code::ResourceExhausted, &negative)),
            Some(None)
        );
        assert_eq!(grpc_retryable(&Status::unavailable("x")), Some(None));
        assert_eq!(
            grpc_retryable(&with(Code::Unavailable, &info)),
            Some(Some(MS(2500)))
        );
        for code in [Code::InvalidArgument, Code::Internal, Code::Unauthenticated] {
            assert_eq!(grpc_retryable(&with(code, &info)), None, "{code:?}");
        }
    }

    #[cfg(feature = "grpc")]
    fn bytes_of(b: &[u8]) -> tonic::codegen::Bytes {
        tonic::codegen::Bytes::copy_from_slice(b)
    }
}
