//! Asserting the reference sequence in VictoriaMetrics through PromQL.

use std::collections::BTreeMap;
use std::time::Duration;

use gym_testkit::{Sample, VictoriaMetrics};

use super::{expected_bucket_counts, rollout_values, verify_values, FLEET_SIZE};

/// How long an export may take to become queryable.
const WAIT: Duration = Duration::from_secs(10);

/// The PromQL label selector of one process's series, by its service name
/// (`<base>/<role name>`): VictoriaMetrics (with `-opentelemetry.usePrometheusNaming`)
/// turns every resource attribute into a label, `service.name` into `service_name`.
pub fn selector(service_name: &str) -> String {
    format!("{{service_name=\"{service_name}\"}}")
}

fn one_value(vm: &VictoriaMetrics, promql: &str, expected: f64) {
    let samples = vm
        .wait_for(promql, WAIT, |s| s.len() == 1 && s[0].value == expected)
        .unwrap_or_else(|e| panic!("{promql}: {e}\n{}", dump(vm)));
    assert_eq!(samples[0].value, expected, "{promql}");
}

/// Every gym series VictoriaMetrics holds (for failure messages).
pub fn dump(vm: &VictoriaMetrics) -> String {
    match vm.query("{__name__=~\"gym_.*\"}") {
        Ok(samples) => samples
            .iter()
            .map(|s| format!("{:?} = {}", s.labels, s.value))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => e,
    }
}

/// Cumulative bucket counts by upper bound (`+Inf` last).
fn buckets(samples: &[Sample]) -> Vec<(f64, f64)> {
    let mut by_le: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for s in samples {
        let le: f64 = match s.labels["le"].as_str() {
            "+Inf" => f64::INFINITY,
            other => other.parse().unwrap(),
        };
        by_le.insert(le.to_bits(), (le, s.value));
    }
    let mut v: Vec<_> = by_le.into_values().collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn cumulative(values: &[f64]) -> Vec<f64> {
    let mut total = 0u64;
    expected_bucket_counts(values)
        .into_iter()
        .map(|c| {
            total += c;
            total as f64
        })
        .collect()
}

/// Asserts the reference sequence recorded by the process `service_name`,
/// with the fleet size if `orchestrator`.
pub fn assert_reference_sequence(vm: &VictoriaMetrics, service_name: &str, orchestrator: bool) {
    let sel = selector(service_name);
    for (metric, values) in [
        ("gym_rollout_duration_ms_milliseconds", rollout_values()),
        ("gym_verify_duration_ms_milliseconds", verify_values()),
    ] {
        one_value(vm, &format!("{metric}_count{sel}"), values.len() as f64);
        one_value(vm, &format!("{metric}_sum{sel}"), values.iter().sum());
        let promql = format!("{metric}_bucket{sel}");
        let expected = cumulative(&values);
        let samples = vm
            .wait_for(&promql, WAIT, |s| s.len() == expected.len())
            .unwrap_or_else(|e| panic!("{promql}: {e}\n{}", dump(vm)));
        let got = buckets(&samples);
        let bounds: Vec<f64> = gym_metrics_api::backend::Instrument::DEFAULT_DURATION_BOUNDARIES_MS
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .collect();
        assert_eq!(
            got.iter().map(|b| b.0).collect::<Vec<_>>(),
            bounds,
            "{promql}"
        );
        assert_eq!(
            got.iter().map(|b| b.1).collect::<Vec<_>>(),
            expected,
            "{promql}"
        );
    }
    one_value(vm, &format!("gym_verify_success_rate{sel}"), 0.75);
    one_value(vm, &format!("gym_verify_completed_total{sel}"), 4.0);
    one_value(vm, &format!("gym_verify_succeeded_total{sel}"), 3.0);
    let active = format!("gym_servers_active{sel}");
    if orchestrator {
        one_value(vm, &active, FLEET_SIZE as f64);
    } else {
        let samples = vm.query(&active).unwrap();
        assert!(
            samples.is_empty(),
            "a server exported {active}: {samples:?}"
        );
    }
}
