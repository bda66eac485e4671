//! W3C Trace Context on the server side (feature `trace-context`): the
//! tower layer reads `traceparent` and `tracestate` from each request and
//! makes the caller's span context current while the handler runs, so a
//! timer started there takes the caller's trace as its exemplar.
//!
//! The parser is written here, not borrowed: the W3C propagator lives in
//! `opentelemetry_sdk`, and this feature pulls only the `opentelemetry` API.
//! Without the feature, [`Remote`] holds nothing and every function does
//! nothing.

#[cfg(feature = "trace-context")]
pub(crate) use with_context::{enter, extract, Remote};

/// No caller's context without the feature.
#[cfg(not(feature = "trace-context"))]
pub(crate) struct Remote;

/// Reads nothing without the feature.
#[cfg(not(feature = "trace-context"))]
#[inline(always)]
pub(crate) fn extract(_headers: &http::HeaderMap) -> Remote {
    Remote
}

/// What [`enter`] returns without the feature: nothing to leave.
#[cfg(not(feature = "trace-context"))]
pub(crate) struct Entered;

/// Enters nothing without the feature.
#[cfg(not(feature = "trace-context"))]
#[inline(always)]
pub(crate) fn enter(_remote: &Remote) -> Entered {
    Entered
}

#[cfg(feature = "trace-context")]
mod with_context {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry::{Context, ContextGuard};

    /// The caller's context, if its `traceparent` was valid.
    pub(crate) type Remote = Option<Context>;

    /// The context of a request whose `traceparent` (exactly one) is valid,
    /// with its `tracestate` (every such header, as one list) where that is
    /// valid too (an invalid one is dropped, the parent kept, as the W3C
    /// recommendation says). Nothing is read with no backend installed (nor
    /// under `off`): the context is there for the exemplars a backend takes.
    pub(crate) fn extract(headers: &http::HeaderMap) -> Remote {
        crate::enabled().then(|| caller(headers)).flatten()
    }

    /// The caller's context as [`extract`] reads it, installed or not.
    pub(super) fn caller(headers: &http::HeaderMap) -> Remote {
        let mut parents = headers.get_all("traceparent").iter();
        let (Some(parent), None) = (parents.next(), parents.next()) else {
            return None;
        };
        let (trace_id, span_id, flags) = parse_traceparent(parent.to_str().ok()?)?;
        let state = trace_state(headers).unwrap_or_default();
        let span = SpanContext::new(trace_id, span_id, flags, true, state);
        Some(Context::current().with_remote_span_context(span))
    }

    /// Every `tracestate` header as one list, as W3C says repeated ones
    /// are (combined in order, `,` between, as RFC 9110 combines repeated
    /// fields); `None` if any is not visible ASCII or any member is invalid.
    /// Its size is the server's header limit's; opentelemetry keeps 32
    /// members at most.
    fn trace_state(headers: &http::HeaderMap) -> Option<TraceState> {
        let mut list = String::new();
        for value in headers.get_all("tracestate") {
            if !list.is_empty() {
                list.push(',');
            }
            list.push_str(value.to_str().ok()?);
        }
        list.parse().ok()
    }

    /// Makes the caller's context current until the guard drops.
    pub(crate) fn enter(remote: &Remote) -> Option<ContextGuard> {
        remote.as_ref().map(|cx| cx.clone().attach())
    }

    /// `version-traceid-parentid-flags`, lowercase hex: version `ff` and
    /// all-zero ids are invalid; a later version may append `-` fields.
    pub(super) fn parse_traceparent(value: &str) -> Option<(TraceId, SpanId, TraceFlags)> {
        let mut fields = value.trim().split('-');
        let (version, trace_id, span_id, flags) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        let version = hex(version, 2)?;
        let later_fields = fields.next().is_some();
        if version == 0xff || (version == 0 && later_fields) {
            return None;
        }
        let trace_id = TraceId::from(hex(trace_id, 32)?);
        let span_id = SpanId::from(u64::try_from(hex(span_id, 16)?).ok()?);
        let flags = TraceFlags::new(u8::try_from(hex(flags, 2)?).ok()? & 1);
        (trace_id != TraceId::INVALID && span_id != SpanId::INVALID)
            .then_some((trace_id, span_id, flags))
    }

    /// Exactly `len` lowercase hex digits.
    fn hex(field: &str, len: usize) -> Option<u128> {
        let lowercase = field
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        (field.len() == len && lowercase)
            .then(|| u128::from_str_radix(field, 16).ok())
            .flatten()
    }
}

#[cfg(all(test, feature = "trace-context"))]
mod tests {
    use super::with_context::{caller, parse_traceparent};
    use super::*;
    use opentelemetry::trace::TraceContextExt;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_becomes_the_remote_parent() {
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", VALID.parse().unwrap());
        headers.insert("tracestate", "gym=rollout".parse().unwrap());
        let remote = caller(&headers).expect("valid");
        assert!(
            extract(&headers).is_none(),
            "nothing installed: nothing read"
        );
        let span = remote.span();
        let ids = span.span_context();
        assert_eq!(
            ids.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(ids.span_id().to_string(), "00f067aa0ba902b7");
        assert!(ids.is_sampled() && ids.is_remote());
        assert_eq!(ids.trace_state().get("gym"), Some("rollout"));
        let trace_id = ids.trace_id();
        let guard = enter(&Some(remote.clone()));
        let current = opentelemetry::Context::current();
        assert_eq!(current.span().span_context().trace_id(), trace_id);
        drop(guard);
        assert!(!opentelemetry::Context::current()
            .span()
            .span_context()
            .is_valid());
    }

    #[test]
    fn invalid_traceparents_are_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-+0f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad:?}");
        }
        // A later version may add fields; its first four still count.
        assert!(parse_traceparent(&format!("01{}-more", &VALID[2..])).is_some());
        let unsampled = parse_traceparent(&VALID.replace("-01", "-00")).unwrap();
        assert!(!unsampled.2.is_sampled());
        // Two traceparent headers: neither is trusted.
        let mut headers = http::HeaderMap::new();
        headers.append("traceparent", VALID.parse().unwrap());
        headers.append("traceparent", VALID.parse().unwrap());
        assert!(caller(&headers).is_none());
        // An invalid tracestate is dropped, the parent kept.
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", VALID.parse().unwrap());
        headers.insert("tracestate", "Gym=rollout".parse().unwrap()); // keys are lowercase
        let remote = caller(&headers).expect("the parent stands");
        assert_eq!(remote.span().span_context().trace_state().header(), "");
    }
}
