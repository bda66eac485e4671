//! Where the external tools live: env override, then `target/tools/bin`, then `PATH`.

use std::path::{Path, PathBuf};

/// An external program the e2e tests drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// The Prometheus server.
    Prometheus,
    /// Prometheus's command-line checker (`promtool check metrics`).
    Promtool,
    /// VictoriaMetrics single-node (Prometheus query API, OTLP/HTTP ingestion).
    VictoriaMetrics,
    /// The rotel OTLP collector (`rotel-agent`).
    Rotel,
    /// VictoriaMetrics' scraping agent (`vmagent`, in the same Debian package):
    /// discovers targets, scrapes them, remote-writes the samples.
    Vmagent,
    /// The Python interpreter of a venv holding the released NeMo Gym
    /// (`nemo-gym` 0.7.0 over `nemo-lens` 0.1.0), for the tests that run a
    /// real Gym process beside ours.
    NemoGymPython,
}

impl Tool {
    /// Every tool, in provisioning order.
    pub const ALL: [Tool; 6] = [
        Tool::Prometheus,
        Tool::Promtool,
        Tool::VictoriaMetrics,
        Tool::Rotel,
        Tool::Vmagent,
        Tool::NemoGymPython,
    ];

    /// The executable's name in `target/tools/bin/` and on `PATH`.
    pub fn binary_name(self) -> &'static str {
        match self {
            Tool::Prometheus => "prometheus",
            Tool::Promtool => "promtool",
            Tool::VictoriaMetrics => "victoria-metrics",
            Tool::Rotel => "rotel-agent",
            Tool::Vmagent => "vmagent",
            Tool::NemoGymPython => "nemo-gym-python",
        }
    }

    /// The environment variable that overrides the tool's location.
    pub fn env_var(self) -> &'static str {
        match self {
            Tool::Prometheus => "PROMETHEUS_BIN",
            Tool::Promtool => "PROMTOOL_BIN",
            Tool::VictoriaMetrics => "VICTORIA_METRICS_BIN",
            Tool::Rotel => "ROTEL_BIN",
            Tool::Vmagent => "VMAGENT_BIN",
            Tool::NemoGymPython => "NEMO_GYM_PYTHON",
        }
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.binary_name())
    }
}

/// The workspace root (this crate lives in `<root>/testkit`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| here.to_path_buf())
}

/// `<workspace>/target/tools`: what `cargo xtask tools` provisions (gitignored).
pub fn tools_dir() -> PathBuf {
    workspace_root().join("target").join("tools")
}

/// `<workspace>/target/tools/bin`: one executable (or symlink) per tool.
pub fn tools_bin_dir() -> PathBuf {
    tools_dir().join("bin")
}

/// Env override first (`PROMETHEUS_BIN`, `PROMTOOL_BIN`, `VICTORIA_METRICS_BIN`,
/// `ROTEL_BIN`, `VMAGENT_BIN`, `NEMO_GYM_PYTHON`), then `<workspace>/target/tools/bin/<name>`, then `PATH`.
pub fn tool_path(tool: Tool) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(tool.env_var()).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let provisioned = tools_bin_dir().join(tool.binary_name());
    if is_executable(&provisioned) {
        return Some(provisioned);
    }
    find_on_path(tool.binary_name())
}

/// The first executable file called `name` in a `PATH` folder.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// A regular file (following symlinks) with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The tool's path, provisioned on demand: when it is missing, `cargo xtask
/// tools` runs (once per process; its lock makes tests side by side wait for
/// one download). A tool still missing fails the test, so a test that could
/// not run is never counted as passed.
///
/// The nested cargo builds xtask in a target directory of its own
/// (`target/tools/xtask`): a plain `cargo test` holds the workspace's build
/// lock while its tests run.
pub fn require(tool: Tool) -> PathBuf {
    if let Some(path) = tool_path(tool) {
        return path;
    }
    static PROVISIONED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let provisioned = PROVISIONED.get_or_init(provision);
    tool_path(tool).unwrap_or_else(|| {
        panic!(
            "{tool} is required and not provisioned (looked at ${}, {}, PATH); \
             `cargo xtask tools` was run for it: {provisioned:?}",
            tool.env_var(),
            tools_bin_dir().join(tool.binary_name()).display()
        )
    })
}

/// `cargo xtask tools --servers` (not the test runner: this test already
/// runs), its output passed through to the test's.
fn provision() -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("a tool is missing: running `cargo xtask tools`");
    let status = std::process::Command::new(cargo)
        .args(["run", "--quiet", "--package", "xtask", "--target-dir"])
        .arg(tools_dir().join("xtask"))
        .args(["--", "tools", "--servers"])
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo xtask tools` failed ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_env_vars_are_distinct() {
        let names: std::collections::BTreeSet<_> =
            Tool::ALL.iter().map(|t| t.binary_name()).collect();
        let vars: std::collections::BTreeSet<_> = Tool::ALL.iter().map(|t| t.env_var()).collect();
        assert_eq!(names.len(), Tool::ALL.len());
        assert_eq!(vars.len(), Tool::ALL.len());
    }

    #[test]
    fn tools_dir_is_under_the_workspace_target() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(tools_bin_dir().ends_with("target/tools/bin"));
    }
}
