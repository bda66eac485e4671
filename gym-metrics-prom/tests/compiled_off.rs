//! A recording backend in a program whose record calls are compiled away
//! refuses to start, loudly. This binary runs twice in `cargo xtask ci`: in the
//! ordinary build (where `build()` and `install()` must succeed) and with
//! `--features gym-metrics-api/off` (where both must fail naming `off`).

use gym_metrics_api::Role;
use gym_metrics_prom::{BuildError, PrometheusBuilder};

const COMPILED_OFF: bool = gym_metrics_api::backend::check_recording_compiled_in().is_err();

#[test]
fn build_and_install_refuse_exactly_when_off_is_compiled_in() {
    let built = PrometheusBuilder::new().role(Role::orchestrator()).build();
    let installed = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .with_http_listener(([127, 0, 0, 1], 0))
        .install();
    if COMPILED_OFF {
        let Err(err) = built else {
            panic!("build() must refuse under `off`")
        };
        assert!(matches!(err, BuildError::CompiledOff(_)), "{err:?}");
        let Err(err) = installed else {
            panic!("install() must refuse under `off`")
        };
        assert!(matches!(err, BuildError::CompiledOff(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("`off` feature"), "{message}");
        assert!(
            message.contains("remove `gym-metrics-api/off`"),
            "{message}"
        );
        assert!(
            gym_metrics_api::role().is_none(),
            "nothing may be installed"
        );
    } else {
        built.expect("build() records for real without `off`");
        let guard = installed.expect("install() records for real without `off`");
        gym_metrics_api::record_rollout_duration(std::time::Duration::from_millis(7));
        assert!(guard
            .handle()
            .render()
            .contains("gym_rollout_duration_ms_milliseconds_count{"));
    }
}
