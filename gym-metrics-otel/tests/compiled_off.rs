//! A recording backend in a program whose record calls are compiled away
//! refuses to start, loudly. This binary runs twice in `cargo xtask ci`: in the
//! ordinary build (where `build()` and `install()` must succeed) and with
//! `--features gym-metrics-api/off` (where both must fail naming `off`).

use gym_metrics_api::Role;
use gym_metrics_otel::{BuildError, MetricsExporter, OtelBuilder};

const COMPILED_OFF: bool = gym_metrics_api::backend::check_recording_compiled_in().is_err();

fn builder() -> OtelBuilder {
    OtelBuilder::new()
        .role(Role::orchestrator())
        .exporter(MetricsExporter::Console)
        .console_writer(std::io::sink())
}

#[test]
fn build_and_install_refuse_exactly_when_off_is_compiled_in() {
    let built = builder().build();
    let installed = builder().install();
    let none = OtelBuilder::new().exporter(MetricsExporter::None).install();
    if COMPILED_OFF {
        for result in [built.map(|_| ()), installed.map(|_| ()), none.map(|_| ())] {
            let err = result.expect_err("every exit must refuse under `off`");
            assert!(matches!(err, BuildError::CompiledOff(_)), "{err:?}");
            assert!(err.to_string().contains("`off` feature"), "{err}");
        }
        assert!(
            gym_metrics_api::role().is_none(),
            "nothing may be installed"
        );
    } else {
        built.expect("build() records for real without `off`");
        installed.expect("install() records for real without `off`");
        assert!(gym_metrics_api::enabled());
        // Exporter none installs too (it declares the role), so it finds
        // the facade taken by the install above.
        let err = none.expect_err("the facade is already taken");
        assert!(matches!(err, BuildError::AlreadyInstalled), "{err:?}");
    }
}
