//! The free functions call sites use: they mirror the reference module
//! (`record_rollout_duration`, `record_verify`, `record_active_servers`).
//!
//! Before anything is installed each costs one atomic load and a branch; with
//! the `off` feature (an application's choice, beside the no-op backend) each compiles to nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::catalogue::Instrument;
use crate::cell::{try_load, try_load_for};
use crate::role::check_writes_fleet_size;
use crate::{bad_input, Group, HttpServerRequest, RoleError};

/// True when a backend is installed, i.e. when recording does anything.
///
/// A call-site gate for work that only feeds metrics (reading a clock,
/// computing a value). Constant `false` under the `off` feature.
///
/// ```
/// if gym_metrics_api::enabled() {
///     // compute something only the metrics need
/// }
/// ```
#[inline(always)]
pub fn enabled() -> bool {
    try_load().is_some()
}

/// True when a backend is installed and its span groups (NeMo Gym's
/// `…_SPAN_GROUPS`; every group unless set) include `group`: whether a call
/// site of that group records. Costs what [`enabled`] costs, one atomic load
/// and a branch; constant `false` under the `off` feature.
///
/// [`Group::Rollout`] gates [`record_rollout_duration`] and the
/// [`crate::RolloutTimer`], [`Group::Verify`] gates [`record_verify`] and the
/// [`crate::VerifyTimer`], [`Group::Server`] gates
/// [`record_http_server_request`]; `gym.servers.active` is not gated.
///
/// ```
/// use gym_metrics_api::{group_enabled, Group};
/// if group_enabled(Group::Verify) {
///     // work that only feeds gym.verify.*
/// }
/// # assert!(!group_enabled(Group::Verify)); // nothing installed here
/// ```
#[inline(always)]
pub fn group_enabled(group: Group) -> bool {
    try_load_for(group).is_some()
}

/// Records one rollout's wall time into `gym.rollout.duration_ms`.
/// Failed rollouts count too. Gated on [`Group::Rollout`]. A duration
/// longer than [`Instrument::MAX_DURATION`] (`u64::MAX` nanoseconds, 584
/// years; `Duration::MAX` is) is dropped and counted in
/// [`crate::dropped_values`].
///
/// ```
/// gym_metrics_api::record_rollout_duration(std::time::Duration::from_millis(1200));
/// ```
#[inline]
pub fn record_rollout_duration(duration: Duration) {
    if let Some(r) = try_load_for(Group::Rollout) {
        if let Some(d) = bad_input::accept_duration(duration, Instrument::ROLLOUT_DURATION.name) {
            r.record_rollout_duration(d);
        }
    }
}

/// [`record_rollout_duration`] in milliseconds, for parity with the reference.
/// NaN, infinities, negatives and anything above
/// [`Instrument::MAX_DURATION_MS`] (584 years: `1e308` and `f64::MAX` are)
/// are dropped, never recorded, and counted in [`crate::dropped_values`]:
/// no value can push the histogram's `_sum` to `+Inf`, on any backend.
///
/// ```
/// gym_metrics_api::record_rollout_duration_ms(1200.0);
/// gym_metrics_api::record_rollout_duration_ms(f64::NAN); // dropped, never a panic
/// gym_metrics_api::record_rollout_duration_ms(1e308); // dropped too
/// ```
#[inline]
pub fn record_rollout_duration_ms(duration_ms: f64) {
    if let Some(r) = try_load_for(Group::Rollout) {
        if let Some(ms) = bad_input::accept(duration_ms, Instrument::ROLLOUT_DURATION.name) {
            r.record_rollout_duration_ms(ms);
        }
    }
}

/// Records one verification's wall time into `gym.verify.duration_ms` and
/// folds its outcome into the success rate and the verify counters. Gated
/// on [`Group::Verify`] (off under Gym's `default` span-group preset). A
/// duration longer than [`Instrument::MAX_DURATION`] is dropped whole
/// (neither the duration nor the outcome is recorded) and counted in
/// [`crate::dropped_values`].
///
/// ```
/// gym_metrics_api::record_verify(std::time::Duration::from_millis(40), true);
/// ```
#[inline]
pub fn record_verify(duration: Duration, succeeded: bool) {
    if let Some(r) = try_load_for(Group::Verify) {
        if let Some(d) = bad_input::accept_duration(duration, Instrument::VERIFY_DURATION.name) {
            r.record_verify(d, succeeded);
        }
    }
}

/// [`record_verify`] in milliseconds. NaN, infinities, negatives and
/// anything above [`Instrument::MAX_DURATION_MS`] are dropped whole: neither
/// the duration nor the outcome is recorded (see [`crate::dropped_values`]).
///
/// ```
/// gym_metrics_api::record_verify_ms(40.0, true);
/// ```
#[inline]
pub fn record_verify_ms(duration_ms: f64, succeeded: bool) {
    if let Some(r) = try_load_for(Group::Verify) {
        if let Some(ms) = bad_input::accept(duration_ms, Instrument::VERIFY_DURATION.name) {
            r.record_verify_ms(ms, succeeded);
        }
    }
}

/// Records one finished HTTP server request into `http.server.request.duration`
/// (seconds, dimensioned by method, route template, status and scheme).
///
/// Usually called for you by [`crate::HttpServerRequestTimer`] or the tower
/// layer (feature `tower`). Nothing installed: one atomic load and a branch;
/// under the `off` feature: nothing.
///
/// ```
/// use std::time::Duration;
/// use gym_metrics_api::{record_http_server_request, HttpMethod, HttpServerRequest, UrlScheme};
/// record_http_server_request(&HttpServerRequest::new(
///     HttpMethod::Post, Some("/verify"), UrlScheme::Http, Some(200), Duration::from_millis(40),
/// ));
/// ```
#[inline]
pub fn record_http_server_request(request: &HttpServerRequest) {
    if let Some(r) = try_load_for(Group::Server) {
        r.record_http_server_request(request);
    }
}

/// Sets `gym.servers.active`: orchestrator only.
///
/// A gauge exports whatever was written last, so a fleet size written by more
/// than one process is not the fleet size. Prefer the [`crate::FleetSize`]
/// capability, which only an orchestrator install yields.
///
/// # Errors
/// From a process whose installed role is not the orchestrator: a
/// [`RoleError`] naming the role; nothing is recorded and a warning is logged
/// once. With nothing installed, this is a no-op and returns `Ok`.
///
/// ```
/// // Nothing installed: a no-op.
/// assert!(gym_metrics_api::record_active_servers(3).is_ok());
/// ```
pub fn record_active_servers(count: u64) -> Result<(), RoleError> {
    let Some(r) = try_load() else {
        return Ok(());
    };
    if let Err(err) = check_writes_fleet_size(r.role()) {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if !WARNED.swap(true, Ordering::Relaxed) {
            log::warn!(target: "gym_metrics", "{err}");
        }
        return Err(err);
    }
    r.record_active_servers(count);
    Ok(())
}
