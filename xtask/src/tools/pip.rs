//! rotel from PyPI, in a private venv at `target/tools/venv`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::checked;

/// The rotel release the tests were written against.
pub const ROTEL_REQUIREMENT: &str = "rotel==0.0.1a15";

/// Creates the venv if needed, installs rotel, and returns the path of `rotel-agent`.
pub fn install_rotel(tools_dir: &Path) -> Result<PathBuf, String> {
    let venv = tools_dir.join("venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let interpreter = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
        let mut venv_cmd = Command::new(&interpreter);
        venv_cmd.args(["-m", "venv"]);
        // Seeding the venv with its own pip (ensurepip) takes seconds; when the
        // interpreter has pip, the venv borrows it from the system site-packages.
        let has_pip = Command::new(&interpreter)
            .args(["-m", "pip", "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if has_pip {
            venv_cmd.args(["--without-pip", "--system-site-packages"]);
        }
        checked("rotel-agent", "python3 -m venv", venv_cmd.arg(&venv))?;
    }
    checked(
        "rotel-agent",
        "pip install",
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            ROTEL_REQUIREMENT,
        ]),
    )?;
    let located = checked(
        "rotel-agent",
        "locate the binary in the rotel package",
        Command::new(&python).args([
            "-c",
            "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ]),
    )?;
    let agent = PathBuf::from(String::from_utf8_lossy(&located.stdout).trim());
    if agent.is_file() {
        Ok(agent)
    } else {
        Err(format!(
            "rotel-agent: the rotel package has no {}",
            agent.display()
        ))
    }
}

/// Installs rotel and links `target/tools/bin/<name>` to its `rotel-agent`.
pub fn provision_rotel(tools_dir: &Path, name: &str) -> Result<PathBuf, String> {
    let agent = install_rotel(tools_dir)?;
    let relative = agent
        .strip_prefix(tools_dir)
        .map(|p| Path::new("..").join(p))
        .unwrap_or_else(|_| agent.clone());
    super::link::symlink(tools_dir, name, &relative)
}
