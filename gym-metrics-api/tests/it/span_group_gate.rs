//! An install whose span groups leave `verify` out (Gym's `default` preset):
//! every verify call site records nothing, the rollout and HTTP ones record,
//! and `gym.servers.active` is never gated.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gym_metrics_api::backend::{Recorder, SpanGroups};
use gym_metrics_api::{
    group_enabled, Group, HttpMethod, HttpServerRequest, HttpServerRequestTimer, Role,
    RolloutTimer, UrlScheme, VerifyTimer,
};

static ROLLOUTS: AtomicU64 = AtomicU64::new(0);
static VERIFIES: AtomicU64 = AtomicU64::new(0);
static HTTP: AtomicU64 = AtomicU64::new(0);
static FLEET: AtomicU64 = AtomicU64::new(0);

struct Counting(Role, SpanGroups);
impl Recorder for Counting {
    fn role(&self) -> &Role {
        &self.0
    }
    fn record_rollout_duration_ms(&self, _: f64) {
        ROLLOUTS.fetch_add(1, Ordering::SeqCst);
    }
    fn record_verify_ms(&self, _: f64, _: bool) {
        VERIFIES.fetch_add(1, Ordering::SeqCst);
    }
    fn record_active_servers(&self, n: u64) {
        FLEET.store(n, Ordering::SeqCst);
    }
    fn record_http_server_request(&self, _: &HttpServerRequest) {
        HTTP.fetch_add(1, Ordering::SeqCst);
    }
    fn span_groups(&self) -> SpanGroups {
        self.1
    }
}

#[test]
fn the_default_preset_records_rollouts_but_no_verifications() {
    if gym_testkit::ran_in_child() {
        return;
    }
    assert!(!group_enabled(Group::Rollout), "nothing installed yet");
    let preset = SpanGroups::DEFAULT_PRESET;
    let installation =
        gym_metrics_api::install(Counting(Role::orchestrator(), preset)).expect("first install");
    for group in Group::ALL {
        assert_eq!(group_enabled(group), preset.contains(group), "{group:?}");
    }
    assert!(gym_metrics_api::enabled());

    gym_metrics_api::record_verify(Duration::from_millis(4), true);
    gym_metrics_api::record_verify_ms(4.0, false);
    VerifyTimer::start().finish(true);
    drop(VerifyTimer::start());
    assert_eq!(VERIFIES.load(Ordering::SeqCst), 0, "verify is off");

    gym_metrics_api::record_rollout_duration(Duration::from_millis(7));
    gym_metrics_api::record_rollout_duration_ms(7.0);
    drop(RolloutTimer::start());
    assert_eq!(ROLLOUTS.load(Ordering::SeqCst), 3);

    gym_metrics_api::record_http_server_request(&HttpServerRequest::new(
        HttpMethod::Get,
        Some("/"),
        UrlScheme::Http,
        Some(200),
        Duration::from_millis(1),
    ));
    HttpServerRequestTimer::start(HttpMethod::Post, Some("/run"), UrlScheme::Http).finish(200);
    assert_eq!(
        HTTP.load(Ordering::SeqCst),
        2,
        "server is in the default preset"
    );

    assert_eq!(gym_metrics_api::record_active_servers(5), Ok(()));
    assert_eq!(FLEET.load(Ordering::SeqCst), 5);
    installation.fleet_size().expect("orchestrator").set(6);
    assert_eq!(
        FLEET.load(Ordering::SeqCst),
        6,
        "the fleet size is not gated"
    );
}
