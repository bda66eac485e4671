//! The `off` switch: an application's choice to compile every record call to
//! nothing, and the check that keeps a recording backend from being silenced
//! by it without a word.

/// True when the `off` feature compiled every record call away.
pub(crate) const COMPILED_OFF: bool = cfg!(feature = "off");

/// A recording backend was built into a program whose record calls are
/// compiled away (the API's `off` feature is on), so it would record nothing.
///
/// Returned by [`check_recording_compiled_in`], which every recording backend
/// calls from its `build()`; the message says how to fix the build.
///
/// ```
/// let e = gym_metrics_api::backend::CompiledOffError;
/// assert!(e.to_string().contains("`off` feature"));
/// assert!(e.to_string().contains("cargo tree"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "gym-metrics-api was built with its `off` feature, which compiles every record call to nothing, \
     so this recording backend would record nothing: remove `gym-metrics-api/off` from this build \
     (only an application's own `noop` feature may turn it on, never a library; \
     `cargo tree -e features -i gym-metrics-api` shows who turns it on)"
)]
pub struct CompiledOffError;

/// `Ok` when record calls reach an installed recorder; [`CompiledOffError`]
/// when the `off` feature compiled them away. A recording backend calls this
/// before it builds anything, so a dead recorder is never silent.
///
/// ```
/// // This doc test is built without `off`.
/// assert_eq!(gym_metrics_api::backend::check_recording_compiled_in(), Ok(()));
/// ```
pub const fn check_recording_compiled_in() -> Result<(), CompiledOffError> {
    if COMPILED_OFF {
        Err(CompiledOffError)
    } else {
        Ok(())
    }
}
