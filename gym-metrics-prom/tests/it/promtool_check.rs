//! `promtool check metrics` on our exposition reports only the four findings
//! the contract's millisecond names imply.

use std::collections::BTreeSet;

use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{contract_findings, promtool_check_metrics, require, Tool};

#[test]
fn only_the_millisecond_name_findings() {
    require(Tool::Promtool);
    let (recorder, handle) = PrometheusBuilder::new()
        .role(Role::orchestrator())
        .build()
        .unwrap();
    recorder.record_rollout_duration_ms(120.0);
    recorder.record_verify_ms(40.0, true);
    recorder.record_verify_ms(8000.0, false);
    recorder.record_active_servers(4);
    let exposition = handle.render();
    assert!(exposition.contains("gym_servers_active{"), "{exposition}");

    let findings: BTreeSet<String> = promtool_check_metrics(&exposition)
        .unwrap()
        .into_iter()
        .collect();
    let expected = contract_findings();
    assert_eq!(findings, expected);
}
