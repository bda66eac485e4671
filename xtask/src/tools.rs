//! `cargo xtask tools`: provisions Prometheus, promtool, VictoriaMetrics, rotel
//! (and wrk, for benchmarks) under `<workspace>/target/tools/`.
//!
//! A tool named by its env variable (`PROMETHEUS_BIN`, ...) or already under
//! `target/tools/bin/` or on `PATH` is used as found. Otherwise the Debian
//! packages are fetched with a private apt configuration (the system's sources
//! stay untouched, nothing is installed) and unpacked with `dpkg -x`, and rotel
//! comes from PyPI into a private venv. Every tool is then run once for its version.

mod apt;
mod lock;
mod pip;
mod probe;
mod run;

use std::path::{Path, PathBuf};
use std::time::Instant;

use gym_testkit::{find_on_path, is_executable, tools_bin_dir, tools_dir, Tool};

/// Where a tool's executable comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Debian packages (`name/suite`); the first one holds `binary` (a path inside the package).
    Deb {
        packages: &'static [DebPackage],
        binary: &'static str,
    },
    /// The PyPI package that ships `rotel-agent`.
    Rotel,
}

/// A Debian package and the suite it is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DebPackage {
    name: &'static str,
    suite: apt::Suite,
}

/// One tool `cargo xtask tools` takes care of.
#[derive(Debug, Clone, Copy)]
struct ToolSpec {
    /// The executable's name in `target/tools/bin/`.
    name: &'static str,
    /// The env variable that names an existing executable instead.
    env_var: Option<&'static str>,
    source: Source,
    /// Arguments that make the tool print its version.
    version_args: &'static [&'static str],
    /// A failure only warns (the tool is not needed by the tests).
    optional: bool,
}

const fn deb(name: &'static str, suite: apt::Suite) -> DebPackage {
    DebPackage { name, suite }
}

const TRIXIE_SERVER: &[DebPackage] = &[deb("prometheus", apt::Suite::Trixie)];
const TRIXIE_PROMTOOL: &[DebPackage] = &[deb("promtool", apt::Suite::Trixie)];
const TRIXIE_VICTORIA: &[DebPackage] = &[deb("victoria-metrics", apt::Suite::Trixie)];
/// wrk links LuaJIT; both come from the host's own suite so they match its libc.
const HOST_WRK: &[DebPackage] = &[
    deb("wrk", apt::Suite::Host),
    deb("libluajit-5.1-2", apt::Suite::Host),
];

fn testkit_spec(tool: Tool) -> ToolSpec {
    let (source, version_args) = match tool {
        Tool::Prometheus => (
            Source::Deb {
                packages: TRIXIE_SERVER,
                binary: "usr/bin/prometheus",
            },
            &["--version"][..],
        ),
        Tool::Promtool => (
            Source::Deb {
                packages: TRIXIE_PROMTOOL,
                binary: "usr/bin/promtool",
            },
            &["--version"][..],
        ),
        Tool::VictoriaMetrics => (
            Source::Deb {
                packages: TRIXIE_VICTORIA,
                binary: "usr/bin/victoria-metrics",
            },
            &["-version"][..],
        ),
        Tool::Rotel => (Source::Rotel, &["--version"][..]),
    };
    ToolSpec {
        name: tool.binary_name(),
        env_var: Some(tool.env_var()),
        source,
        version_args,
        optional: false,
    }
}

/// Every tool, the testkit's four first.
fn specs() -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = Tool::ALL.iter().map(|t| testkit_spec(*t)).collect();
    specs.push(ToolSpec {
        name: "wrk",
        env_var: Some("WRK_BIN"),
        source: Source::Deb {
            packages: HOST_WRK,
            binary: "usr/bin/wrk",
        },
        version_args: &["--version"],
        optional: true,
    });
    specs
}

/// How a tool was found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Env(&'static str),
    AlreadyProvisioned,
    Path,
    Provisioned,
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

/// `cargo xtask tools`.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`tools` takes no arguments, got {extra:?}"));
    }
    provision()
}

/// Makes every tool available and prints one line per tool; `Err` names the
/// tool and step that failed.
pub fn provision() -> Result<(), String> {
    let start = Instant::now();
    let dir = tools_dir();
    std::fs::create_dir_all(tools_bin_dir())
        .map_err(|e| format!("cannot create {}: {e}", tools_bin_dir().display()))?;
    let _lock = lock::ToolsLock::acquire(&dir)?;

    let all_specs = specs();
    let mut found: Vec<(ToolSpec, PathBuf, Origin)> = Vec::new();
    let mut missing: Vec<ToolSpec> = Vec::new();
    for spec in all_specs {
        match locate(&spec) {
            Some((path, origin)) => found.push((spec, path, origin)),
            None => missing.push(spec),
        }
    }

    let mut failures = Vec::new();
    let debs: Vec<&ToolSpec> = missing
        .iter()
        .filter(|s| matches!(s.source, Source::Deb { .. }))
        .collect();
    if !debs.is_empty() {
        let packages: Vec<DebPackage> = debs
            .iter()
            .flat_map(|s| match s.source {
                Source::Deb { packages, .. } => packages.to_vec(),
                Source::Rotel => Vec::new(),
            })
            .collect();
        match apt::fetch_and_unpack(&dir, &packages) {
            Ok(()) => {
                for spec in debs {
                    if let Source::Deb { binary, packages } = spec.source {
                        let needs_libraries = packages.iter().any(|p| p.name.starts_with("lib"));
                        let linked = if needs_libraries {
                            link_with_libraries(&dir, spec.name, binary)
                        } else {
                            link(&dir, spec.name, Path::new("../root").join(binary).as_path())
                        };
                        push_outcome(&mut found, &mut failures, spec, linked);
                    }
                }
            }
            Err(e) => failures.extend(debs.iter().map(|s| (**s, e.clone()))),
        }
    }
    for spec in missing.iter().filter(|s| s.source == Source::Rotel) {
        let linked = pip::install_rotel(&dir).and_then(|agent| {
            let relative = agent
                .strip_prefix(&dir)
                .map(|p| Path::new("..").join(p))
                .unwrap_or(agent.clone());
            link(&dir, spec.name, &relative)
        });
        push_outcome(&mut found, &mut failures, spec, linked);
    }

    let order: Vec<&str> = specs().iter().map(|s| s.name).collect();
    found.sort_by_key(|(spec, _, _)| order.iter().position(|n| *n == spec.name));
    for (spec, path, origin) in &found {
        match probe::version(path, spec.version_args) {
            Ok(version) => {
                let ours = matches!(origin, Origin::Provisioned | Origin::AlreadyProvisioned);
                let version = match (version.is_empty(), ours) {
                    (false, _) => version,
                    (true, true) => {
                        package_version(&dir, spec).unwrap_or_else(|| "(prints no version)".into())
                    }
                    (true, false) => "(prints no version)".into(),
                };
                println!(
                    "{:<17} {:<60} {:<40} {origin}",
                    spec.name,
                    path.display(),
                    version
                );
            }
            Err(e) => failures.push((*spec, format!("{}: version check failed: {e}", spec.name))),
        }
    }
    let mut fatal = Vec::new();
    for (spec, error) in failures {
        if spec.optional {
            eprintln!(
                "warning: {} (optional, not needed by the tests) not provisioned: {error}",
                spec.name
            );
        } else {
            fatal.push(error);
        }
    }
    eprintln!("tools: done in {:.1}s", start.elapsed().as_secs_f64());
    if fatal.is_empty() {
        Ok(())
    } else {
        Err(fatal.join("\n"))
    }
}

fn push_outcome(
    found: &mut Vec<(ToolSpec, PathBuf, Origin)>,
    failures: &mut Vec<(ToolSpec, String)>,
    spec: &ToolSpec,
    linked: Result<PathBuf, String>,
) {
    match linked {
        Ok(path) => found.push((*spec, path, Origin::Provisioned)),
        Err(e) => failures.push((*spec, e)),
    }
}

/// Env variable, then an earlier provisioning that still runs, then `PATH`.
fn locate(spec: &ToolSpec) -> Option<(PathBuf, Origin)> {
    if let Some(var) = spec.env_var {
        if let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            return Some((PathBuf::from(value), Origin::Env(var)));
        }
    }
    let provisioned = tools_bin_dir().join(spec.name);
    if is_executable(&provisioned) && probe::version(&provisioned, spec.version_args).is_ok() {
        return Some((provisioned, Origin::AlreadyProvisioned));
    }
    find_on_path(spec.name).map(|path| (path, Origin::Path))
}

/// `target/tools/bin/<name>` -> `relative_target` (relative to `bin/`).
fn link(dir: &Path, name: &str, relative_target: &Path) -> Result<PathBuf, String> {
    let link = dir.join("bin").join(name);
    if !is_executable(&dir.join("bin").join(relative_target)) {
        return Err(format!(
            "{name}: link: {} is not an executable",
            relative_target.display()
        ));
    }
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(relative_target, &link)
        .map_err(|e| format!("{name}: link: cannot create {}: {e}", link.display()))?;
    Ok(link)
}

/// A wrapper script for a binary that needs libraries unpacked beside it.
fn link_with_libraries(dir: &Path, name: &str, binary: &str) -> Result<PathBuf, String> {
    let library_dir = apt::library_dir(&dir.join("root")).ok_or_else(|| {
        format!(
            "{name}: link: no unpacked library folder under {}",
            dir.join("root").display()
        )
    })?;
    let library_dir = library_dir
        .strip_prefix(dir)
        .unwrap_or(&library_dir)
        .to_path_buf();
    let script = format!(
        "#!/bin/sh\n# Written by `cargo xtask tools`: {name} with its unpacked libraries.\n\
         here=$(dirname \"$(readlink -f \"$0\")\")\n\
         LD_LIBRARY_PATH=\"$here/../{lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\" exec \"$here/../root/{binary}\" \"$@\"\n",
        lib = library_dir.display()
    );
    let path = dir.join("bin").join(name);
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, script)
        .map_err(|e| format!("{name}: link: cannot write {}: {e}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{name}: link: cannot chmod {}: {e}", path.display()))?;
    Ok(path)
}

/// The Debian version of the tool's package, read from the kept `.deb` file name.
fn package_version(dir: &Path, spec: &ToolSpec) -> Option<String> {
    let Source::Deb { packages, .. } = spec.source else {
        return None;
    };
    let package = packages.first()?;
    apt::downloaded_version(dir, package.name).map(|v| format!("{v} (Debian package)"))
}
