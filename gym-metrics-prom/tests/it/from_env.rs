//! `from_env()` reads the process environment. (Mutates the environment: its
//! own test binary, one test.)

use gym_metrics_api::backend::Recorder;
use gym_metrics_prom::PrometheusBuilder;

#[test]
fn reads_the_otel_variables_and_names_a_bad_one() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("OTEL_EXPORTER_PROMETHEUS_PORT", "ninety");
    }
    let e = PrometheusBuilder::from_env().unwrap_err().to_string();
    assert!(
        e.contains("OTEL_EXPORTER_PROMETHEUS_PORT") && e.contains("ninety"),
        "{e}"
    );

    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("OTEL_EXPORTER_PROMETHEUS_PORT", "0");
        std::env::set_var("OTEL_SERVICE_NAME", "lab");
        std::env::set_var(
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=staging,team=r%20l",
        );
    }
    let (recorder, handle) = PrometheusBuilder::from_env().unwrap().build().unwrap();
    let text = handle.render();
    assert!(text.contains("service_name=\"lab/server\""), "{text}");
    assert!(
        text.contains("deployment_environment=\"staging\""),
        "{text}"
    );
    assert!(text.contains("team=\"r l\""), "{text}");
    assert_eq!(recorder.role().name(), "server");

    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("OTEL_RESOURCE_ATTRIBUTES", "broken");
    }
    let e = PrometheusBuilder::from_env().unwrap_err().to_string();
    assert!(
        e.contains("OTEL_RESOURCE_ATTRIBUTES") && e.contains("broken"),
        "{e}"
    );

    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::remove_var("OTEL_RESOURCE_ATTRIBUTES");
    }

    // NeMo Gym's variables go through the same reading: a bad one names
    // itself, the Gym prefix wins over the lens one, SLURM_JOB_ID is the
    // run id when none is set.
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("NEMO_LENS_SPAN_GROUPS", "checkpoint");
    }
    let e = PrometheusBuilder::from_env().unwrap_err().to_string();
    assert!(
        e.contains("NEMO_LENS_SPAN_GROUPS")
            && e.contains("checkpoint")
            && e.contains("per_rollout"),
        "{e}"
    );
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("NEMO_GYM_OTEL_SPAN_GROUPS", "all");
        std::env::set_var("SLURM_JOB_ID", "4242");
        std::env::set_var("NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER", "false");
    }
    let (_recorder, handle) = PrometheusBuilder::from_env().unwrap().build().unwrap();
    let text = handle.render();
    assert!(text.contains("nemo_run_id=\"4242\""), "{text}");
    assert!(text.contains("service_name=\"lab\""), "{text}");
    assert!(text.contains("nemo_gym_service_group=\"lab\""), "{text}");
    // SAFETY: this test has the process to itself (`ran_in_child`), and no
    // other thread of it reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("NEMO_GYM_OTEL_RUN_ID", "run-9");
    }
    let (_recorder, handle) = PrometheusBuilder::from_env().unwrap().build().unwrap();
    assert!(handle.render().contains("nemo_run_id=\"run-9\""));
}
