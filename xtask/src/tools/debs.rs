//! Tools from Debian packages: download, unpack, link into `target/tools/bin/`.

use std::path::{Path, PathBuf};

use super::apt::{self, AptSession};
use super::link;
use super::spec::{DebPackage, Source, ToolSpec};

/// Provisions each tool from its packages; one outcome per tool.
///
pub fn provision(tools_dir: &Path, specs: &[ToolSpec]) -> Vec<(ToolSpec, Result<PathBuf, String>)> {
    let suites = specs
        .iter()
        .flat_map(|s| s.packages().iter().map(|p| p.suite));
    let mut session = AptSession::new(tools_dir, suites);
    let all = distinct(specs.iter().flat_map(|s| s.packages().iter().copied()));
    let downloaded: Vec<(ToolSpec, Result<(), String>)> = match session.download(&all) {
        Ok(()) => specs.iter().map(|s| (*s, Ok(()))).collect(),
        // One download for all is fastest; when it fails, the required tools get
        // a download of their own so an optional package never costs them.
        Err(all_failed) => {
            let required = distinct(
                specs
                    .iter()
                    .filter(|s| !s.optional)
                    .flat_map(|s| s.packages().iter().copied()),
            );
            let required_outcome = if required.is_empty() {
                Ok(())
            } else {
                session.download(&required)
            };
            specs
                .iter()
                .map(|s| {
                    let outcome = if s.optional {
                        Err(all_failed.clone())
                    } else {
                        required_outcome.clone()
                    };
                    (*s, outcome)
                })
                .collect()
        }
    };
    // Unpacking is CPU-bound (VictoriaMetrics alone is 40 MB compressed): one
    // thread per package, each package once (vmagent comes in VictoriaMetrics'
    // package: two threads writing the same files would race).
    let packages = distinct(
        downloaded
            .iter()
            .filter(|(_, d)| d.is_ok())
            .flat_map(|(s, _)| s.packages().iter().copied()),
    );
    let unpacked: Vec<(&'static str, Result<(), String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = packages
            .iter()
            .map(|package| {
                let package = *package;
                (
                    package.name,
                    scope.spawn(move || apt::unpack(tools_dir, &package)),
                )
            })
            .collect();
        handles
            .into_iter()
            .map(|(name, handle)| {
                let outcome = handle
                    .join()
                    .unwrap_or_else(|_| Err(format!("{name}: unpacking panicked")));
                (name, outcome)
            })
            .collect()
    });
    downloaded
        .into_iter()
        .map(|(spec, downloaded)| {
            let outcome = downloaded
                .and_then(|()| {
                    spec.packages().iter().try_for_each(|p| {
                        unpacked
                            .iter()
                            .find(|(name, _)| *name == p.name)
                            .map_or_else(
                                || Err(format!("{}: not unpacked", p.name)),
                                |(_, r)| r.clone(),
                            )
                    })
                })
                .and_then(|()| link_tool(tools_dir, &spec));
            (spec, outcome)
        })
        .collect()
}

/// `packages` without repeats (several tools can come from one package), in order.
fn distinct(packages: impl Iterator<Item = DebPackage>) -> Vec<DebPackage> {
    let mut out: Vec<DebPackage> = Vec::new();
    for p in packages {
        if !out.iter().any(|q| q.name == p.name) {
            out.push(p);
        }
    }
    out
}

/// Links the tool's binary (its packages already unpacked) into `bin/`.
fn link_tool(tools_dir: &Path, spec: &ToolSpec) -> Result<PathBuf, String> {
    let Source::Deb { packages, binary } = spec.source else {
        return Err(format!("{}: not a Debian package", spec.name));
    };
    if packages.len() == 1 {
        return link::symlink(tools_dir, spec.name, &Path::new("../root").join(binary));
    }
    // The extra packages are libraries: run the binary with them on LD_LIBRARY_PATH.
    let root = tools_dir.join("root");
    let library_dir = apt::library_dir(&root).ok_or_else(|| {
        format!(
            "{}: link: no unpacked library folder under {}/usr/lib",
            spec.name,
            root.display()
        )
    })?;
    let relative = library_dir.strip_prefix(tools_dir).unwrap_or(&library_dir);
    link::wrapper(tools_dir, spec.name, binary, relative)
}

/// The Debian version of the tool's kept package, e.g. `1.112.0+ds1-2 (Debian package)`.
pub fn package_version(tools_dir: &Path, spec: &ToolSpec) -> Option<String> {
    let package = spec.packages().first()?;
    apt::downloaded_version(tools_dir, package.name).map(|v| format!("{v} (Debian package)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::spec::{specs, Suite};

    #[test]
    fn a_package_shared_by_two_tools_is_fetched_and_unpacked_once() {
        let all = distinct(specs().iter().flat_map(|s| s.packages().iter().copied()));
        let names: Vec<&str> = all.iter().map(|p| p.name).collect();
        assert_eq!(
            names.iter().filter(|n| **n == "victoria-metrics").count(),
            1,
            "{names:?}"
        );
        let repeated = [
            DebPackage {
                name: "a",
                suite: Suite::Host,
            },
            DebPackage {
                name: "b",
                suite: Suite::Host,
            },
            DebPackage {
                name: "a",
                suite: Suite::Host,
            },
        ];
        let once: Vec<&str> = distinct(repeated.into_iter())
            .iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(once, ["a", "b"]);
    }
}
