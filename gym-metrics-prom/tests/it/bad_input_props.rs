//! Bad input (RELIABILITY.md, case 4), Prometheus backend: property tests over
//! the facade's `f64` entry points (NaN, infinities, negatives, subnormals,
//! huge values) and the environment parser. Never a panic; the histogram sums
//! stay finite; the counts move by exactly the values accepted; a bad variable
//! is a start-up error naming it. (Global install and process environment:
//! its own test binary, one test per global.)

use std::sync::OnceLock;

use crate::common::exposition::parse;
use gym_metrics_api::backend::Instrument;
use gym_metrics_prom::{PrometheusBuilder, PrometheusHandle};
use gym_testkit::any_f64;
use proptest::prelude::*;

fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let (handle, _installation) = PrometheusBuilder::new().install_recorder().unwrap();
        handle
    })
}

/// Every sample of the exposition by its sample name (no labels vary here).
fn samples(handle: &PrometheusHandle) -> std::collections::BTreeMap<String, f64> {
    parse(&handle.render())
        .into_values()
        .flat_map(|f| f.samples.into_iter())
        .filter(|((_, labels), _)| !labels.contains_key("le"))
        .map(|((name, _), v)| (name, v))
        .collect()
}

fn value(s: &std::collections::BTreeMap<String, f64>, name: &str) -> f64 {
    s.get(name).copied().unwrap_or(0.0)
}

const ROLLOUT_COUNT: &str = "gym_rollout_duration_ms_milliseconds_count";
const ROLLOUT_SUM: &str = "gym_rollout_duration_ms_milliseconds_sum";
const VERIFY_COUNT: &str = "gym_verify_duration_ms_milliseconds_count";
const VERIFY_SUM: &str = "gym_verify_duration_ms_milliseconds_sum";

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn f64_entry_points_never_panic_keep_sums_finite_and_count_exactly(
        values in proptest::collection::vec((any_f64(), any::<bool>(), any::<bool>()), 0..48)
    ) {
        if gym_testkit::ran_in_child() {
            return Ok(());
        }
        let h = handle();
        let before = samples(h);
        let dropped_before = gym_metrics_api::dropped_values();
        let (mut rollouts, mut verifies, mut successes, mut dropped) = (0u64, 0u64, 0u64, 0u64);
        for (v, is_verify, ok) in values {
            let usable = (0.0..=Instrument::MAX_DURATION_MS).contains(&v);
            if is_verify {
                gym_metrics_api::record_verify_ms(v, ok);
                verifies += u64::from(usable);
                successes += u64::from(usable && ok);
            } else {
                gym_metrics_api::record_rollout_duration_ms(v);
                rollouts += u64::from(usable);
            }
            dropped += u64::from(!usable);
        }
        let after = samples(h);
        for sum in [ROLLOUT_SUM, VERIFY_SUM] {
            prop_assert!(value(&after, sum).is_finite(), "{sum} = {}", value(&after, sum));
        }
        prop_assert_eq!(value(&after, ROLLOUT_COUNT) - value(&before, ROLLOUT_COUNT), rollouts as f64);
        prop_assert_eq!(value(&after, VERIFY_COUNT) - value(&before, VERIFY_COUNT), verifies as f64);
        let completed = value(&after, "gym_verify_completed_total");
        let succeeded = value(&after, "gym_verify_succeeded_total");
        prop_assert_eq!(completed - value(&before, "gym_verify_completed_total"), verifies as f64);
        prop_assert_eq!(succeeded - value(&before, "gym_verify_succeeded_total"), successes as f64);
        if let Some(rate) = after.get("gym_verify_success_rate") {
            prop_assert!((0.0..=1.0).contains(rate), "rate {rate}");
            prop_assert_eq!(*rate, succeeded / completed);
        }
        prop_assert_eq!(gym_metrics_api::dropped_values() - dropped_before, dropped);
    }

    #[test]
    fn the_port_variable_parses_or_is_an_error_naming_it(
        value in prop_oneof![
            Just(String::new()),
            Just("   ".to_string()),
            Just("65536".to_string()),
            Just("-1".to_string()),
            Just(" 9464 ".to_string()),
            Just("0x50".to_string()),
            "[0-9]{1,6}",
            "[^\u{0}]{0,12}",
        ]
    ) {
        if gym_testkit::ran_in_child() {
            return Ok(());
        }
        const PORT: &str = "OTEL_EXPORTER_PROMETHEUS_PORT";
        // SAFETY: this test has the process to itself (`ran_in_child`), and no
        // other thread of it reads or writes the environment meanwhile.
        unsafe {
            std::env::set_var(PORT, &value);
        }
        let result = PrometheusBuilder::from_env();
        // SAFETY: this test has the process to itself (`ran_in_child`), and no
        // other thread of it reads or writes the environment meanwhile.
        unsafe {
            std::env::remove_var(PORT);
        }
        let trimmed = value.trim();
        if trimmed.is_empty() || trimmed.parse::<u16>().is_ok() {
            prop_assert!(result.is_ok(), "{value:?}: {:?}", result.err());
        } else {
            let e = result.err().map(|e| e.to_string()).unwrap_or_default();
            prop_assert!(e.contains(PORT), "{value:?}: {e}");
        }
    }
}

/// Through the recorder itself (no facade): the largest duration taken
/// (`u64::MAX` nanoseconds, 584 years), four times per thread on three
/// threads, and the sums carry past the integer range instead of wrapping or
/// saturating: every value is counted in full. `f64::MAX` milliseconds is
/// dropped, as the facade drops it.
#[test]
fn huge_values_carry_the_sum_instead_of_overflowing() {
    if gym_testkit::ran_in_child() {
        return;
    }
    use gym_metrics_api::backend::Recorder;
    let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..4 {
                    recorder.record_rollout_duration_ms(Instrument::MAX_DURATION_MS);
                    recorder.record_verify_ms(Instrument::MAX_DURATION_MS, true);
                    recorder.record_rollout_duration_ms(f64::MAX);
                    recorder.record_verify_ms(f64::MAX, true);
                }
            });
        }
    });
    let after = samples(&handle);
    let expected = 12.0 * u64::MAX as f64 / 1e6;
    for sum in [ROLLOUT_SUM, VERIFY_SUM] {
        let got = value(&after, sum);
        assert!(
            (got - expected).abs() <= expected * 1e-12,
            "{sum}: {got} vs {expected}"
        );
    }
    assert_eq!(value(&after, ROLLOUT_COUNT), 12.0);
    assert_eq!(value(&after, "gym_verify_succeeded_total"), 12.0);
}
