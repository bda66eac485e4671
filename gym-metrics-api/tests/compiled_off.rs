//! With the `off` feature (an application's `noop` build turns it on), even a
//! recorder installed by hand receives nothing, and a recording backend's
//! start-up check says so. Built only with `--features off` (see Cargo.toml).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::{HttpMethod, HttpServerRequest, HttpServerRequestTimer, Role, UrlScheme};

static CALLS: AtomicU64 = AtomicU64::new(0);

struct Spy(Role);
impl Recorder for Spy {
    fn role(&self) -> &Role {
        &self.0
    }
    fn record_rollout_duration_ms(&self, _: f64) {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }
    fn record_verify_ms(&self, _: f64, _: bool) {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }
    fn record_active_servers(&self, _: u64) {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }
    fn record_http_server_request(&self, _: &HttpServerRequest) {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn nothing_reaches_any_recorder() {
    let installation = gym_metrics_api::install(Spy(Role::orchestrator())).unwrap();
    assert!(!gym_metrics_api::enabled());
    for group in gym_metrics_api::Group::ALL {
        assert!(!gym_metrics_api::group_enabled(group), "{group:?}");
    }
    gym_metrics_api::record_rollout_duration(Duration::from_millis(1));
    gym_metrics_api::record_rollout_duration_ms(1.0);
    gym_metrics_api::record_verify(Duration::from_millis(1), true);
    gym_metrics_api::record_verify_ms(1.0, false);
    assert_eq!(gym_metrics_api::record_active_servers(2), Ok(()));
    installation.fleet_size().unwrap().set(3);
    drop(gym_metrics_api::RolloutTimer::start());
    drop(gym_metrics_api::VerifyTimer::start());
    gym_metrics_api::record_http_server_request(&HttpServerRequest::new(
        HttpMethod::Get,
        Some("/verify"),
        UrlScheme::Http,
        Some(200),
        Duration::from_millis(1),
    ));
    HttpServerRequestTimer::start(HttpMethod::Post, None, UrlScheme::Http).finish(500);
    drop(HttpServerRequestTimer::start(
        HttpMethod::Post,
        None,
        UrlScheme::Http,
    ));
    assert_eq!(CALLS.load(Ordering::SeqCst), 0);
    // The role is still declared: start-up code behaves as with any backend.
    assert!(gym_metrics_api::role().unwrap().is_orchestrator());
    // And a recording backend would be told, before it builds anything.
    assert_eq!(
        gym_metrics_api::backend::check_recording_compiled_in(),
        Err(gym_metrics_api::backend::CompiledOffError)
    );
}
