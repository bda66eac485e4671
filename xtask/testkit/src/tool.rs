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

/// The workspace root (this crate lives in `<root>/xtask/testkit`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .nth(2)
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

/// True when a missing tool must fail the test: `CI=true` or `GYM_REQUIRE_TOOLS=1`.
pub fn tools_required() -> bool {
    let ci = std::env::var("CI").ok();
    let gym = std::env::var("GYM_REQUIRE_TOOLS").ok();
    is_truthy(ci.as_deref()) || is_truthy(gym.as_deref())
}

/// `1`, `true` or `yes` (any case).
fn is_truthy(value: Option<&str>) -> bool {
    value.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// `Some(path)`, or: when tools are required (`CI=true` or `GYM_REQUIRE_TOOLS=1`)
/// panics with "run `cargo xtask tools`"; otherwise prints a loud
/// "SKIPPED \<tool\> not provisioned, run `cargo xtask tools`" to stderr and returns `None`.
pub fn require(tool: Tool) -> Option<PathBuf> {
    if let Some(path) = tool_path(tool) {
        return Some(path);
    }
    let message = format!(
        "{tool} not provisioned (looked at ${}, {}, PATH), run `cargo xtask tools`",
        tool.env_var(),
        tools_bin_dir().join(tool.binary_name()).display()
    );
    if tools_required() {
        panic!("{message}");
    }
    eprintln!("\n********** SKIPPED {message} **********\n");
    None
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
    fn only_true_or_one_requires_tools() {
        assert!(is_truthy(Some("true")) && is_truthy(Some("1")) && is_truthy(Some("TRUE")));
        assert!(!is_truthy(None) && !is_truthy(Some("")) && !is_truthy(Some("0")));
        assert!(!is_truthy(Some("false")));
    }

    #[test]
    fn tools_dir_is_under_the_workspace_target() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(tools_bin_dir().ends_with("target/tools/bin"));
    }
}
