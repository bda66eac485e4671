//! Tools from Debian packages: download, unpack, link into `target/tools/bin/`.

use std::path::{Path, PathBuf};

use super::apt::{self, AptSession};
use super::link;
use super::spec::{Source, ToolSpec};

/// Provisions each tool from its packages; one outcome per tool.
///
pub fn provision(tools_dir: &Path, specs: &[ToolSpec]) -> Vec<(ToolSpec, Result<PathBuf, String>)> {
    let suites = specs
        .iter()
        .flat_map(|s| s.packages().iter().map(|p| p.suite));
    let mut session = AptSession::new(tools_dir, suites);
    let all: Vec<_> = specs
        .iter()
        .flat_map(|s| s.packages().iter().copied())
        .collect();
    let downloaded: Vec<(ToolSpec, Result<(), String>)> = match session.download(&all) {
        Ok(()) => specs.iter().map(|s| (*s, Ok(()))).collect(),
        // One download for all is fastest; when it fails, the required tools get
        // a download of their own so an optional package never costs them.
        Err(all_failed) => {
            let required: Vec<_> = specs
                .iter()
                .filter(|s| !s.optional)
                .flat_map(|s| s.packages().iter().copied())
                .collect();
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
    // Unpacking is CPU-bound (VictoriaMetrics alone is 40 MB compressed): one thread per tool.
    std::thread::scope(|scope| {
        let handles: Vec<_> = downloaded
            .into_iter()
            .map(|(spec, downloaded)| {
                let handle = scope
                    .spawn(move || downloaded.and_then(|()| unpack_and_link(tools_dir, &spec)));
                (spec, handle)
            })
            .collect();
        handles
            .into_iter()
            .map(|(spec, handle)| {
                let outcome = handle
                    .join()
                    .unwrap_or_else(|_| Err(format!("{}: unpacking panicked", spec.name)));
                (spec, outcome)
            })
            .collect()
    })
}

fn unpack_and_link(tools_dir: &Path, spec: &ToolSpec) -> Result<PathBuf, String> {
    let Source::Deb { packages, binary } = spec.source else {
        return Err(format!("{}: not a Debian package", spec.name));
    };
    for package in packages {
        apt::unpack(tools_dir, package)?;
    }
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
