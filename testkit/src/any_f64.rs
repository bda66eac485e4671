//! The `f64` inputs of the bad-input property tests (RELIABILITY.md, case 4):
//! every class of value a caller could hand the facade.

use proptest::prelude::*;

/// Every class of `f64`, and the edges by name: NaN, the infinities, the
/// extremes, the smallest normal and subnormal, negative zero, and ordinary
/// durations.
///
/// ```
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// let values: Vec<f64> = (0..200)
///     .map(|_| gym_testkit::any_f64().new_tree(&mut runner).unwrap().current())
///     .collect();
/// assert!(values.iter().any(|v| v.is_nan()));
/// assert!(values.iter().any(|v| v.is_finite() && *v >= 0.0));
/// ```
pub fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        proptest::num::f64::ANY,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MAX),
        Just(f64::MIN),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(-0.0),
        0.0..1e7f64,
    ]
}
