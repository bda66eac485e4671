//! Finding a tool that needs no provisioning.

use std::path::PathBuf;

use gym_testkit::{find_on_path, is_executable, tools_bin_dir};

use super::probe;
use super::spec::ToolSpec;

/// How a tool was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Named by its env variable.
    Env(&'static str),
    /// Under `target/tools/bin/` from an earlier run, and it still runs.
    AlreadyProvisioned,
    /// On `PATH`.
    Path,
    /// Provisioned by this run.
    Provisioned,
}

impl Origin {
    /// True when the executable lives under `target/tools/`.
    pub fn is_ours(self) -> bool {
        matches!(self, Origin::AlreadyProvisioned | Origin::Provisioned)
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Env(var) => write!(f, "found (${var})"),
            Origin::AlreadyProvisioned => f.write_str("provisioned (already there)"),
            Origin::Path => f.write_str("found (PATH)"),
            Origin::Provisioned => f.write_str("provisioned (now)"),
        }
    }
}

/// The env variable, then an earlier provisioning that still runs, then `PATH`
/// (the testkit's order, so the report names what the tests will use).
pub fn locate(spec: &ToolSpec) -> Option<(PathBuf, Origin)> {
    if let Some(value) = std::env::var_os(spec.env_var).filter(|v| !v.is_empty()) {
        return Some((PathBuf::from(value), Origin::Env(spec.env_var)));
    }
    let provisioned = tools_bin_dir().join(spec.name);
    if is_executable(&provisioned) && probe::version(&provisioned, spec.version_args).is_ok() {
        return Some((provisioned, Origin::AlreadyProvisioned));
    }
    find_on_path(spec.name).map(|path| (path, Origin::Path))
}
