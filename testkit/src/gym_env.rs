//! NeMo Gym's settings as a test gives them: a [`GymEnv`] read from a few
//! `NAME=value` pairs instead of the process environment.

use gym_metrics_kit::env::GymEnv;

/// The [`GymEnv`] that `vars` (name, value) alone would give.
///
/// # Panics
/// On a value Gym's reader refuses: the test's own mistake.
///
/// ```
/// let gym = gym_testkit::gym_env(&[("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "1")]);
/// assert!(gym.memory_profiling(&gym_metrics_api::Role::orchestrator()).is_some());
/// ```
pub fn gym_env(vars: &[(&str, &str)]) -> GymEnv {
    GymEnv::read(|name| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    })
    .unwrap_or_else(|e| panic!("{vars:?}: {e}"))
}
