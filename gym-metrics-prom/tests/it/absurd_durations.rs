//! Absurd durations (issue 43): a finite value no clock measured (`1e308`
//! or `f64::MAX` milliseconds, `Duration::MAX`, anything past `u64::MAX`
//! nanoseconds, 584 years) is refused by the facade and counted with NaN and
//! the negatives, so `_sum` stays finite and exactly the sum of the values
//! taken; the longest taken (`u64::MAX` nanoseconds) is counted in full. A
//! sum too large for plain digits (a bridged histogram's) is written in
//! scientific notation, which `promtool` reads. (Global install: each test
//! that takes it starts with `ran_in_child`.)

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::exposition::parse;
use gym_metrics_api::backend::Instrument;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{contract_findings, promtool_check_metrics, require, Tool};

/// Every sample of `text` without `le`, by its sample name.
fn samples(text: &str) -> BTreeMap<String, f64> {
    parse(text)
        .into_values()
        .flat_map(|f| f.samples.into_iter())
        .filter(|((_, labels), _)| !labels.contains_key("le"))
        .map(|((name, _), v)| (name, v))
        .collect()
}

/// `got` within a relative 1e-12 of `expected` (the sums carry past
/// `u64::MAX` nanoseconds into a float).
fn close(got: f64, expected: f64) -> bool {
    (got - expected).abs() <= expected.abs() * 1e-12
}

#[test]
fn absurd_durations_are_refused_and_counted_and_the_sums_stay_exact() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let (handle, _installation) = PrometheusBuilder::new().install_recorder().unwrap();
    let longest = Duration::from_nanos(u64::MAX);
    assert_eq!(longest, Instrument::MAX_DURATION);
    let dropped_before = gym_metrics_api::dropped_values();

    // Taken: two ordinary values and the longest, in each unit.
    gym_metrics_api::record_rollout_duration_ms(120.0);
    gym_metrics_api::record_rollout_duration(Duration::from_millis(40));
    gym_metrics_api::record_rollout_duration_ms(Instrument::MAX_DURATION_MS);
    gym_metrics_api::record_rollout_duration(longest);
    gym_metrics_api::record_verify_ms(5.0, true);
    gym_metrics_api::record_verify_ms(Instrument::MAX_DURATION_MS, true);
    gym_metrics_api::record_verify(longest, false);
    // Refused, each twice (once a rollout, once a verification).
    let refused_ms = [1e308, f64::MAX];
    let refused = [Duration::MAX, longest + Duration::from_nanos(1)];
    for ms in refused_ms {
        gym_metrics_api::record_rollout_duration_ms(ms);
        gym_metrics_api::record_verify_ms(ms, true);
    }
    for d in refused {
        gym_metrics_api::record_rollout_duration(d);
        gym_metrics_api::record_verify(d, true);
    }

    let dropped = gym_metrics_api::dropped_values() - dropped_before;
    assert_eq!(dropped, 2 * (refused_ms.len() + refused.len()) as u64);

    let text = handle.render();
    let s = samples(&text);
    let max_ms = u64::MAX as f64 / 1e6;
    let rollout_sum = s["gym_rollout_duration_ms_milliseconds_sum"];
    let verify_sum = s["gym_verify_duration_ms_milliseconds_sum"];
    assert!(rollout_sum.is_finite() && verify_sum.is_finite(), "{text}");
    assert!(close(rollout_sum, 160.0 + 2.0 * max_ms), "{rollout_sum}");
    assert!(close(verify_sum, 5.0 + 2.0 * max_ms), "{verify_sum}");
    assert_eq!(s["gym_rollout_duration_ms_milliseconds_count"], 4.0);
    assert_eq!(s["gym_verify_duration_ms_milliseconds_count"], 3.0);
    assert_eq!(s["gym_verify_completed_total"], 3.0);
    assert_eq!(s["gym_verify_succeeded_total"], 2.0);
    // Written as a float of at most 17 significant digits, never hundreds.
    for line in text.lines().filter(|l| l.contains("_milliseconds_sum")) {
        let value = line.rsplit(' ').next().unwrap_or_default();
        assert!(value.len() <= 24, "{line}");
    }
    // The OpenMetrics text agrees.
    let om = samples(handle.render_openmetrics().trim_end_matches("# EOF\n"));
    assert_eq!(
        om["gym_rollout_duration_ms_milliseconds_sum"], rollout_sum,
        "{om:?}"
    );
}

#[test]
fn a_huge_sum_is_written_in_scientific_notation_that_promtool_reads() {
    require(Tool::Promtool);
    let (recorder, handle) = PrometheusBuilder::new()
        .with_metrics_bridge(gym_metrics_kit::bridge::MetricsBridgeOptions::new())
        .build()
        .unwrap();
    {
        use gym_metrics_api::backend::Recorder;
        // The longest duration, straight into the recorder: taken; f64::MAX
        // milliseconds: dropped, as the facade drops it.
        recorder.record_rollout_duration_ms(Instrument::MAX_DURATION_MS);
        recorder.record_rollout_duration_ms(f64::MAX);
        recorder.record_verify(Duration::MAX, true);
    }
    let bridge = handle.metrics_recorder().unwrap();
    metrics::with_local_recorder(&bridge, || {
        metrics::describe_histogram!("huge.values", metrics::Unit::Seconds, "Huge values");
        metrics::histogram!("huge.values").record(1.2e154); // near the bridge's largest, 2^512
        metrics::describe_gauge!("huge.gauge", "A huge gauge");
        metrics::gauge!("huge.gauge").set(1e308);
    });
    let text = handle.render();
    assert!(text.contains("\nhuge_values_seconds_sum{"), "{text}");
    let line = |prefix: &str| {
        let at = text
            .find(prefix)
            .unwrap_or_else(|| panic!("{prefix} in {text}"));
        text[at + 1..]
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("\nhuge_values_seconds_sum{").ends_with("} 1.2e154"),
        "{text}"
    );
    assert!(line("\nhuge_gauge{").ends_with("} 1e308"), "{text}");
    assert!(
        line("\ngym_rollout_duration_ms_milliseconds_sum{").ends_with("} 18446744073709.55"),
        "{text}"
    );
    assert!(line("\ngym_rollout_duration_ms_milliseconds_count{").ends_with("} 1"));
    // Duration::MAX: dropped, outcome and all (no verification shown yet).
    assert!(line("\ngym_verify_completed_total{").ends_with("} 0"));
    let s = samples(&text);
    assert_eq!(s["huge_values_seconds_sum"], 1.2e154);

    let findings: std::collections::BTreeSet<String> = promtool_check_metrics(&text)
        .unwrap()
        .into_iter()
        .filter(|f| !f.contains("huge_gauge"))
        .collect();
    // A value promtool cannot read is a finding ("expected float as value").
    assert!(
        findings.is_subset(&contract_findings()),
        "{findings:?} in {text}"
    );
}
