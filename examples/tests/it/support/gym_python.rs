//! NeMo Gym's released Python packages, run from a test: a driver script
//! begins with [`PRELUDE`] and runs in the environment the test gives it.
//!
//! Two workarounds for the released packages sit in the prelude: nemo-gym
//! 0.7.0 imports `NV_DL_RANK` / `NV_DL_WORLD_SIZE` from `nemo.lens.semconv`,
//! which lens 0.1.0 lacks (Gym's telemetry then stays off without a word at
//! the default log level), and lens 0.1.0 has no span-group registry, so
//! Gym's groups (`verify`, `per_rollout`, ...) are unknown to it and make
//! Gym's telemetry setup fail. Gym pins a later lens commit, which PyPI does
//! not have; the prelude sets the two names (the later lens's values) and
//! teaches lens Gym's groups and presets before Gym initialises.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// What every driver runs before it imports Gym's telemetry.
pub const PRELUDE: &str = r#"
# nemo-gym 0.7.0 imports these from nemo.lens.semconv; nemo-lens 0.1.0 (PyPI) lacks
# them, and Gym's telemetry then silently stays off. The values are later lens's.
import nemo.lens.semconv as semconv
semconv.NV_DL_RANK = getattr(semconv, "NV_DL_RANK", "nv.dl.rank")
semconv.NV_DL_WORLD_SIZE = getattr(semconv, "NV_DL_WORLD_SIZE", "nv.dl.world_size")

# lens 0.1.0 has no SpanRegistry, so Gym's span groups never register and any Gym
# group in the spec fails Gym's setup: give lens Gym's groups and presets
# (nemo_gym/telemetry/span_groups.py).
from nemo.lens.groups import SpanGroup
GYM = frozenset(["job", "server", "http_client", "rollout", "verify", "agent", "model_call", "sandbox"])
SPINE = frozenset(["server", "http_client", "rollout"])
if "rollout" not in SpanGroup.ALL_GROUPS:
    SpanGroup.ALL_GROUPS = SpanGroup.ALL_GROUPS | GYM
    SpanGroup._PRESETS = dict(
        SpanGroup._PRESETS,
        default=frozenset(["job"]) | SPINE,
        per_rollout=frozenset(["verify", "agent", "model_call"]) | SPINE,
        all=SpanGroup.ALL_GROUPS,
    )

"#;

/// A driver's whole text: [`PRELUDE`], then `body`.
pub fn script(body: &str) -> String {
    format!("{PRELUDE}{body}")
}

/// The Python venv's interpreter running the driver with `args`, in `env` alone.
///
/// Its temporary files go beside the script, in the test's own temp dir:
/// wandb (which a Gym resources server imports) makes two temp dirs at
/// import and removes them only at a clean exit, and a test ends its
/// servers by killing them.
pub fn driver(
    python: &Path,
    script: &Path,
    args: &[&str],
    env: &BTreeMap<String, String>,
) -> Command {
    let mut cmd = Command::new(python);
    cmd.arg(script).args(args).env_clear().envs(env);
    if let Some(dir) = script.parent() {
        cmd.env("TMPDIR", dir);
    }
    cmd
}
