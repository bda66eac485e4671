//! Bad input (RELIABILITY.md, case 4), OpenTelemetry backend: property tests
//! over the facade's `f64` entry points (NaN, infinities, negatives,
//! subnormals, huge values) and every `OTEL_*` variable the builder reads.
//! Never a panic; the exported histogram sums stay finite and the counts are
//! exactly the values accepted; a bad variable is a start-up error naming it.
//! (Global install: its own test binary.)

// The first two tests export to the fake collector: OTLP/HTTP protobuf.
#[cfg(feature = "http-proto")]
use std::time::Duration;

#[cfg(feature = "http-proto")]
use crate::support::fake_collector::{histogram_point, int_value, Answer, FakeCollector};
#[cfg(feature = "http-proto")]
use gym_metrics_api::backend::{Instrument, Recorder};
#[cfg(feature = "http-proto")]
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, ENV_VARIABLES};
#[cfg(feature = "http-proto")]
use gym_testkit::any_f64;
use proptest::prelude::*;
#[cfg(feature = "http-proto")]
use proptest::test_runner::{Config, TestRunner};

/// What the facade takes: 0 to `Instrument::MAX_DURATION_MS` (584 years).
#[cfg(feature = "http-proto")]
fn usable(v: f64) -> bool {
    (0.0..=Instrument::MAX_DURATION_MS).contains(&v)
}

#[cfg(feature = "http-proto")]
#[test]
fn f64_entry_points_never_panic_and_the_exported_sums_stay_finite() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeCollector::start(Answer::Ok);
    let guard = OtelBuilder::new()
        .role(Role::server("props-0", "resources"))
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_secs(3600))
        .shutdown_timeout(Duration::from_secs(5))
        .install()
        .unwrap();
    let (mut rollouts, mut verifies, mut successes) = (0u64, 0u64, 0u64);
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = proptest::collection::vec((any_f64(), any::<bool>(), any::<bool>()), 0..48);
    // The runner's closure must be `Fn`: count through cells.
    let counts = std::cell::Cell::new((0u64, 0u64, 0u64));
    runner
        .run(&strategy, |values| {
            let (mut r, mut v, mut s) = counts.get();
            for (ms, is_verify, ok) in values {
                if is_verify {
                    gym_metrics_api::record_verify_ms(ms, ok);
                    v += u64::from(usable(ms));
                    s += u64::from(usable(ms) && ok);
                } else {
                    gym_metrics_api::record_rollout_duration_ms(ms);
                    r += u64::from(usable(ms));
                }
            }
            counts.set((r, v, s));
            Ok(())
        })
        .unwrap();
    let (r, v, s) = counts.get();
    rollouts += r;
    verifies += v;
    successes += s;
    // f64::MAX twice, for certain: dropped. The largest taken, twice: kept.
    for _ in 0..2 {
        gym_metrics_api::record_rollout_duration_ms(f64::MAX);
        gym_metrics_api::record_verify_ms(f64::MAX, true);
        gym_metrics_api::record_rollout_duration_ms(Instrument::MAX_DURATION_MS);
        gym_metrics_api::record_verify_ms(Instrument::MAX_DURATION_MS, true);
    }
    rollouts += 2;
    verifies += 2;
    successes += 2;

    guard.shutdown().unwrap();
    let last = collector.accepted().pop().expect("the final export");
    let r = histogram_point(&last, Instrument::ROLLOUT_DURATION.name);
    let v = histogram_point(&last, Instrument::VERIFY_DURATION.name);
    for (name, p) in [("rollout", r), ("verify", v)] {
        let sum = p.sum.unwrap_or_default();
        assert!(sum.is_finite(), "{name} sum {sum}");
    }
    assert_eq!(r.count, rollouts);
    assert_eq!(v.count, verifies);
    assert_eq!(
        int_value(&last, Instrument::VERIFY_COMPLETED.name),
        verifies as i64
    );
    assert_eq!(
        int_value(&last, Instrument::VERIFY_SUCCEEDED.name),
        successes as i64
    );
}

/// Through the recorder itself (no facade), `f64::MAX` twice: dropped, as the
/// facade drops it; the largest duration taken, twice: the SDK's sum stays
/// finite.
#[cfg(feature = "http-proto")]
#[test]
fn huge_values_straight_into_the_recorder() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeCollector::start(Answer::Ok);
    let (recorder, guard) = OtelBuilder::new()
        .endpoint(collector.endpoint())
        .export_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    recorder.record_rollout_duration_ms(f64::MAX);
    recorder.record_rollout_duration_ms(f64::MAX);
    recorder.record_rollout_duration(Duration::MAX);
    recorder.record_rollout_duration_ms(Instrument::MAX_DURATION_MS);
    recorder.record_rollout_duration(Instrument::MAX_DURATION);
    guard.shutdown().unwrap();
    let last = collector.accepted().pop().expect("the final export");
    let p = histogram_point(&last, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(p.count, 2);
    let sum = p.sum.unwrap_or_default();
    assert_eq!(sum, 2.0 * Instrument::MAX_DURATION_MS);
}

/// Values for any variable: empty, blank, plausible and hostile.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("  ".to_string()),
        Just("true".to_string()),
        Just("grpc".to_string()),
        Just("http://127.0.0.1:4318".to_string()),
        Just("-1".to_string()),
        Just("18446744073709551616".to_string()),
        Just("k=v,=x,y".to_string()),
        Just("%zz=%".to_string()),
        "[0-9]{1,20}",
        "\\PC{0,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_variable_value_parses_or_is_an_error_naming_that_variable(
        index in 0..ENV_VARIABLES.len(),
        value in any_value(),
    ) {
        if gym_testkit::ran_in_child() {
            return Ok(());
        }
        let variable = ENV_VARIABLES[index];
        let result = OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone()));
        match result {
            Ok(_) => {}
            Err(e) => {
                prop_assert_eq!(e.variable(), variable, "{}", e);
                prop_assert!(e.to_string().contains(variable), "{}", e);
            }
        }
        if value.trim().is_empty() {
            // Empty counts as unset: never an error.
            prop_assert!(OtelBuilder::from_env_lookup(|name| (name == variable).then(|| value.clone())).is_ok());
        }
    }
}
