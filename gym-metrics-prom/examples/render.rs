//! Prints the exposition for the sample recordings.
use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;

fn main() -> Result<(), gym_metrics_prom::BuildError> {
    let (recorder, handle) = gym_metrics_prom::PrometheusBuilder::new()
        .role(Role::orchestrator())
        .build()?;
    for ms in [120.0, 3400.0, 45000.0] {
        recorder.record_rollout_duration_ms(ms);
    }
    for (ms, ok) in [(40.0, true), (250.0, true), (1200.0, true), (8000.0, false)] {
        recorder.record_verify_ms(ms, ok);
    }
    recorder.record_active_servers(4);
    if std::env::args().any(|a| a == "--openmetrics") {
        print!("{}", handle.render_openmetrics());
    } else {
        print!("{}", handle.render());
    }
    Ok(())
}
