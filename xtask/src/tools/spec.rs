//! What `cargo xtask tools` provisions, and where each tool comes from.

use gym_testkit::Tool;

/// Where a tool's executable comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Debian packages; the first holds `binary` (a path inside the package).
    Deb {
        packages: &'static [DebPackage],
        binary: &'static str,
    },
    /// The PyPI package `rotel`, which ships `rotel-agent`.
    Rotel,
    /// A Python 3.13 venv with NeMo Gym's released wheels from PyPI; the
    /// tool is a script running its interpreter.
    NemoGymVenv,
}

/// Which Debian suite a package comes from (`apt.rs` knows the codenames).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// Debian 13: statically linked Go servers run on older hosts too.
    Trixie,
    /// The host's own Debian release (for C programs linked against its libc).
    Host,
}

/// A Debian package and the suite it is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DebPackage {
    pub name: &'static str,
    pub suite: Suite,
}

/// One tool `cargo xtask tools` takes care of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// The executable's name in `target/tools/bin/`.
    pub name: &'static str,
    /// The env variable that names an existing executable instead.
    pub env_var: &'static str,
    pub source: Source,
    /// Arguments that make the tool print its version.
    pub version_args: &'static [&'static str],
    /// A failure only warns: the tests do not need it (wrk is for benchmarks).
    pub optional: bool,
}

impl ToolSpec {
    /// The Debian packages to fetch (none for rotel).
    pub fn packages(&self) -> &'static [DebPackage] {
        match self.source {
            Source::Deb { packages, .. } => packages,
            Source::Rotel | Source::NemoGymVenv => &[],
        }
    }
}

const fn deb(name: &'static str, suite: Suite) -> DebPackage {
    DebPackage { name, suite }
}

const PROMETHEUS: &[DebPackage] = &[deb("prometheus", Suite::Trixie)];
const PROMTOOL: &[DebPackage] = &[deb("promtool", Suite::Trixie)];
const VICTORIA_METRICS: &[DebPackage] = &[deb("victoria-metrics", Suite::Trixie)];
/// wrk links LuaJIT (not on a plain host); both come from the host's own suite,
/// built against its libc (trixie's LuaJIT needs glibc 2.38).
const WRK: &[DebPackage] = &[deb("wrk", Suite::Host), deb("libluajit-5.1-2", Suite::Host)];

fn testkit_spec(tool: Tool) -> ToolSpec {
    let (source, version_args): (Source, &'static [&'static str]) = match tool {
        Tool::Prometheus => (
            Source::Deb {
                packages: PROMETHEUS,
                binary: "usr/bin/prometheus",
            },
            &["--version"],
        ),
        Tool::Promtool => (
            Source::Deb {
                packages: PROMTOOL,
                binary: "usr/bin/promtool",
            },
            &["--version"],
        ),
        // Debian's build prints an empty version; the package version is shown instead.
        Tool::VictoriaMetrics => (
            Source::Deb {
                packages: VICTORIA_METRICS,
                binary: "usr/bin/victoria-metrics",
            },
            &["-version"],
        ),
        Tool::Rotel => (Source::Rotel, &["--version"]),
        // The version check imports Gym's telemetry, so a broken venv is provisioned again.
        Tool::NemoGymPython => (Source::NemoGymVenv, super::gym_venv::VERSION_ARGS),
        // From the same package as VictoriaMetrics (fetched once).
        Tool::Vmagent => (
            Source::Deb {
                packages: VICTORIA_METRICS,
                binary: "usr/bin/vmagent",
            },
            &["-version"],
        ),
    };
    ToolSpec {
        name: tool.binary_name(),
        env_var: tool.env_var(),
        source,
        version_args,
        optional: false,
    }
}

/// Every tool, in the order they are reported: the testkit's six, then wrk.
pub fn specs() -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = Tool::ALL.iter().map(|t| testkit_spec(*t)).collect();
    specs.push(ToolSpec {
        name: "wrk",
        env_var: "WRK_BIN",
        source: Source::Deb {
            packages: WRK,
            binary: "usr/bin/wrk",
        },
        version_args: &["--version"],
        optional: true,
    });
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_testkit_tool_is_provisioned_and_required() {
        let specs = specs();
        for tool in Tool::ALL {
            let spec = specs.iter().find(|s| s.name == tool.binary_name());
            assert!(
                spec.is_some_and(|s| !s.optional && s.env_var == tool.env_var()),
                "{tool}"
            );
        }
    }

    #[test]
    fn names_are_unique_and_debs_name_their_binary() {
        let specs = specs();
        let mut names: Vec<_> = specs.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        for spec in &specs {
            if let Source::Deb { packages, binary } = spec.source {
                assert!(
                    !packages.is_empty() && binary.starts_with("usr/"),
                    "{spec:?}"
                );
            }
        }
    }
}
