//! NeMo Gym's released Python packages, from PyPI, in a private venv at
//! `target/tools/nemo-gym-venv`, for the tests that run a real Gym process
//! beside ours.
//!
//! nemo-gym 0.7.0 declares `Requires-Python >=3.13.14`, and no such
//! interpreter is on this kind of machine (pyenv has 3.13.0); its wheel runs
//! on 3.13.0, so it is installed with `--no-deps --ignore-requires-python`,
//! then the packages its telemetry and its HTTP client import, by name and
//! version (the ones Gym pins, where it pins one).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::checked;

/// The Gym release the tests were written against (installed without its
/// dependencies: see the module documentation).
pub const NEMO_GYM_REQUIREMENT: &str = "nemo-gym==0.7.0";

/// What Gym's telemetry imports: lens with its OpenTelemetry SDK (the
/// versions the tests were written against), and Gym's configuration
/// models; then what `nemo_gym.server_utils` (Gym's HTTP client, which
/// sends `traceparent`) imports. hydra-core 1.3 takes omegaconf below 2.4;
/// psutil is what Gym's memory profiler (`nemo_gym.telemetry.memory`)
/// reads the host with. Then Gym's `telemetry` extra for its FastAPI
/// servers (the ASGI/FastAPI instrumentation, of the SDK's 0.66b2), and
/// what a Gym resources server imports (`base_resources_server` imports
/// `reward_profile`, which imports pandas, scipy and wandb).
pub const TELEMETRY_REQUIREMENTS: &[&str] = &[
    "nemo-lens[sdk]==0.1.0",
    "opentelemetry-sdk==1.45.2",
    "opentelemetry-exporter-otlp-proto-http==1.45.2",
    "opentelemetry-exporter-otlp-proto-grpc==1.45.2",
    "pydantic==2.14.4",
    "omegaconf==2.3.1",
    "aiohttp==3.14.5",
    "fastapi==0.165.0",
    "httptools==0.9.0",
    "hydra-core==1.3.8",
    "itsdangerous==2.2.0",
    "openai==2.44.0",
    "orjson==3.13.0",
    "pydot==4.0.1",
    "ray==2.60.0",
    "requests==2.34.2",
    "rich==15.0.0",
    "uvicorn==0.55.0",
    "yappi==1.7.6",
    "psutil==7.2.2",
    "opentelemetry-instrumentation==0.66b2",
    "opentelemetry-instrumentation-asgi==0.66b2",
    "opentelemetry-instrumentation-fastapi==0.66b2",
    "opentelemetry-util-http==0.66b2",
    "pandas==3.1.1",
    "scipy==1.18.1",
    "wandb==0.31.0",
];

/// The variable naming a Python 3.13 (or newer) to build the venv with.
pub const INTERPRETER_VAR: &str = "NEMO_GYM_PYTHON_INTERPRETER";

/// The tool's version check: imports Gym's telemetry and prints both
/// packages' versions (so a venv that cannot import it is not "there").
pub const VERSION_ARGS: &[&str] = &[
    "-c",
    "import importlib.metadata as m, nemo_gym.telemetry.metrics, nemo_gym.telemetry.memory, \
     nemo_gym.server_utils, nemo_gym.base_resources_server, \
     opentelemetry.instrumentation.fastapi; \
     print('nemo-gym', m.version('nemo-gym'), 'nemo-lens', m.version('nemo-lens'))",
];

/// Builds the venv if needed, installs the packages, and writes
/// `target/tools/bin/<name>`: a script running the venv's interpreter.
pub fn provision(tools_dir: &Path, name: &str) -> Result<PathBuf, String> {
    let venv = tools_dir.join("nemo-gym-venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let interpreter = interpreter()?;
        checked(
            name,
            "python3.13 -m venv",
            Command::new(&interpreter).args(["-m", "venv"]).arg(&venv),
        )?;
    }
    let pip = |step: &str, args: &[&str]| {
        checked(
            name,
            step,
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(args),
        )
    };
    pip(
        "pip install nemo-gym (no dependencies)",
        &[
            "--no-deps",
            "--ignore-requires-python",
            NEMO_GYM_REQUIREMENT,
        ],
    )?;
    pip(
        "pip install Gym's telemetry and HTTP client packages",
        TELEMETRY_REQUIREMENTS,
    )?;
    let script = format!(
        "#!/bin/sh\n# Written by `cargo xtask tools`: the Python of the NeMo Gym venv.\n\
         exec \"{}\" \"$@\"\n",
        python.display()
    );
    super::link::script_file(tools_dir, name, &script)
}

/// `$NEMO_GYM_PYTHON_INTERPRETER`, else `python3.13` on `PATH`, else the
/// newest pyenv 3.13 (`$PYENV_ROOT`, else `~/.pyenv`); each must be 3.13 or
/// newer.
fn interpreter() -> Result<PathBuf, String> {
    if let Some(named) = std::env::var_os(INTERPRETER_VAR).filter(|v| !v.is_empty()) {
        let named = PathBuf::from(named);
        return if is_313_or_newer(&named) {
            Ok(named)
        } else {
            Err(format!(
                "nemo-gym-python: ${INTERPRETER_VAR}={} is not a Python 3.13 or newer",
                named.display()
            ))
        };
    }
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
    let mut pyenv: Vec<PathBuf> = pyenv_root
        .and_then(|root| std::fs::read_dir(root.join("versions")).ok())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("3.13"))
        .map(|e| e.path().join("bin").join("python3.13"))
        .collect();
    // Newest last (3.13.10 after 3.13.9).
    pyenv.sort_by_key(|p| version_key(p));
    let mut candidates = gym_testkit::find_on_path("python3.13")
        .into_iter()
        .chain(pyenv.into_iter().rev());
    candidates.find(|p| is_313_or_newer(p)).ok_or_else(|| {
        format!(
            "nemo-gym-python: no Python 3.13 found (looked at ${INTERPRETER_VAR}, python3.13 \
                 on PATH, ~/.pyenv/versions/3.13*): NeMo Gym 0.7.0 needs 3.13; install one \
                 (`pyenv install 3.13`) or name it in ${INTERPRETER_VAR}"
        )
    })
}

/// The numeric parts of the pyenv folder's name (`3.13.10` -> `[3, 13, 10]`).
fn version_key(python: &Path) -> Vec<u32> {
    python
        .ancestors()
        .nth(2)
        .and_then(Path::file_name)
        .map(|n| {
            n.to_string_lossy()
                .split('.')
                .map(|part| part.parse().unwrap_or(0))
                .collect()
        })
        .unwrap_or_default()
}

fn is_313_or_newer(python: &Path) -> bool {
    Command::new(python)
        .args([
            "-c",
            "import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyenv_versions_sort_numerically() {
        let key = |v: &str| version_key(&Path::new("/p/versions").join(v).join("bin/python3.13"));
        assert!(key("3.13.10") > key("3.13.9"));
        assert_eq!(key("3.13.0"), vec![3, 13, 0]);
    }

    #[test]
    fn a_missing_interpreter_is_not_313() {
        assert!(!is_313_or_newer(Path::new("/nonexistent/python3.13")));
    }
}
