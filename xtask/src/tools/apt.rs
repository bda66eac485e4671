//! Debian packages through a private apt configuration under `target/tools/apt/`.
//!
//! The system's sources, lists, cache and dpkg database are never touched:
//! `apt-get update` and `apt-get download` run with every `Dir::` pointing into
//! the private folder, and packages are unpacked with `dpkg -x` (no install, no
//! maintainer scripts, no services).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::checked;
use super::spec::{DebPackage, Suite};

/// The mirror the packages come from (the one this machine's own sources use).
pub const MIRROR: &str = "http://deb.debian.org/debian";
/// The keyring Debian's archive is signed with (from `debian-archive-keyring`).
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
/// The suite with Prometheus 2.53, promtool and VictoriaMetrics 1.112.
const SERVER_SUITE: &str = "trixie";

/// The codename apt fetches `suite` from.
fn codename(suite: Suite) -> String {
    match suite {
        Suite::Trixie => SERVER_SUITE.to_string(),
        Suite::Host => host_codename().unwrap_or_else(|| SERVER_SUITE.to_string()),
    }
}

/// `VERSION_CODENAME` from `/etc/os-release` when the host is Debian.
fn host_codename() -> Option<String> {
    debian_codename(&std::fs::read_to_string("/etc/os-release").ok()?)
}

/// `VERSION_CODENAME` of an `os-release` text, if it describes Debian.
fn debian_codename(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim_matches('"').to_string())
    };
    (field("ID=")? == "debian")
        .then(|| field("VERSION_CODENAME="))
        .flatten()
        .filter(|c| !c.is_empty())
}

/// Fetches packages into `target/tools/debs/` (kept, so a later run needs no
/// network), running `apt-get update` at most once.
pub struct AptSession {
    tools_dir: PathBuf,
    suites: Vec<String>,
    updated: Option<AptDir>,
}

impl AptSession {
    /// A session that may fetch from these suites.
    pub fn new(tools_dir: &Path, suites: impl IntoIterator<Item = Suite>) -> Self {
        let mut suites: Vec<String> = suites.into_iter().map(codename).collect();
        suites.sort();
        suites.dedup();
        Self {
            tools_dir: tools_dir.to_path_buf(),
            suites,
            updated: None,
        }
    }

    /// Downloads the packages whose `.deb` is not kept yet.
    pub fn download(&mut self, packages: &[DebPackage]) -> Result<(), String> {
        let names = packages
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(" ");
        let what = format!("debian packages [{names}]");
        let debs = self.tools_dir.join("debs");
        std::fs::create_dir_all(&debs)
            .map_err(|e| format!("{what}: cannot create {}: {e}", debs.display()))?;
        let wanted: Vec<&DebPackage> = packages
            .iter()
            .filter(|p| downloaded_file(&self.tools_dir, p.name).is_none())
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let apt = match self.updated.take() {
            Some(apt) => apt,
            None => {
                let apt = AptDir::prepare(&self.tools_dir, &self.suites)
                    .map_err(|e| format!("{what}: {e}"))?;
                checked(&what, "apt-get update", apt.command("update").arg("-q"))?;
                apt
            }
        };
        let mut download = apt.command("download");
        download
            .arg("-q")
            .args(
                wanted
                    .iter()
                    .map(|p| format!("{}/{}", p.name, codename(p.suite))),
            )
            .current_dir(&debs);
        let outcome = checked(&what, "apt-get download", &mut download).map(|_| ());
        self.updated = Some(apt);
        outcome
    }
}

/// `dpkg -x` of a downloaded package into `target/tools/root/` (no install, no scripts).
pub fn unpack(tools_dir: &Path, package: &DebPackage) -> Result<(), String> {
    let deb = downloaded_file(tools_dir, package.name).ok_or_else(|| {
        format!(
            "{}: apt-get download left no .deb in {}",
            package.name,
            tools_dir.join("debs").display()
        )
    })?;
    let root = tools_dir.join("root");
    checked(
        package.name,
        "dpkg -x",
        Command::new("dpkg").arg("-x").arg(&deb).arg(&root),
    )
    .map(|_| ())
}

/// The private apt folder: sources, lists, cache and an empty dpkg status.
struct AptDir {
    path: PathBuf,
}

impl AptDir {
    fn prepare(tools_dir: &Path, suites: &[String]) -> Result<Self, String> {
        if !Path::new(KEYRING).is_file() {
            return Err(format!(
                "{KEYRING} is missing (Debian's debian-archive-keyring package)"
            ));
        }
        let path = tools_dir.join("apt");
        for sub in ["sources", "lists/partial", "cache/archives/partial"] {
            std::fs::create_dir_all(path.join(sub))
                .map_err(|e| format!("cannot create {}: {e}", path.join(sub).display()))?;
        }
        let sources = format!(
            "# Written by `cargo xtask tools`; used only with -oDir::Etc::SourceParts pointing here.\n\
             Types: deb\nURIs: {MIRROR}\nSuites: {}\nComponents: main\nSigned-By: {KEYRING}\n",
            suites.join(" ")
        );
        let write = |file: &Path, text: &str| {
            std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))
        };
        write(&path.join("sources").join("gym-tools.sources"), &sources)?;
        write(&path.join("status"), "")?;
        Ok(Self { path })
    }

    /// `apt-get <verb>` confined to this folder.
    fn command(&self, verb: &str) -> Command {
        let dir = |sub: &str| self.path.join(sub).display().to_string();
        let mut cmd = Command::new("apt-get");
        cmd.arg(verb).args([
            "-oDir::Etc::SourceList=/dev/null".to_string(),
            format!("-oDir::Etc::SourceParts={}", dir("sources")),
            format!("-oDir::State::Lists={}", dir("lists")),
            format!("-oDir::Cache={}", dir("cache")),
            format!("-oDir::State::status={}", dir("status")),
            // Files land in our folder, which apt's `_apt` sandbox user may not write to.
            "-oAPT::Sandbox::User=root".to_string(),
            // Only the package lists: no AppStream metadata, no translations.
            "-oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false".to_string(),
            "-oAcquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false".to_string(),
            "-oAcquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false".to_string(),
            "-oAcquire::Languages=none".to_string(),
        ]);
        cmd
    }
}

/// The kept `debs/<package>_<version>_<arch>.deb`, if downloaded before.
fn downloaded_file(tools_dir: &Path, package: &str) -> Option<PathBuf> {
    let prefix = format!("{package}_");
    std::fs::read_dir(tools_dir.join("debs"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.starts_with(&prefix) && name.ends_with(".deb")
        })
}

/// The Debian version of a kept package (`1.112.0+ds1-2`), URL-decoded (`%3a` is `:`).
pub fn downloaded_version(tools_dir: &Path, package: &str) -> Option<String> {
    let file = downloaded_file(tools_dir, package)?;
    version_in_file_name(&file.file_name()?.to_string_lossy(), package)
}

/// `1:2.0-1` from `<package>_1%3a2.0-1_amd64.deb`.
fn version_in_file_name(file_name: &str, package: &str) -> Option<String> {
    let version = file_name
        .strip_prefix(&format!("{package}_"))?
        .split('_')
        .next()?;
    Some(version.replace("%3a", ":"))
}

/// The unpacked multiarch library folder (`root/usr/lib/x86_64-linux-gnu`, ...).
pub fn library_dir(root: &Path) -> Option<PathBuf> {
    let lib = root.join("usr").join("lib");
    std::fs::read_dir(&lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.is_dir()
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with("-linux-gnu"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_codename_of_debian_only() {
        let bookworm = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_CODENAME=bookworm\n";
        assert_eq!(debian_codename(bookworm).as_deref(), Some("bookworm"));
        let ubuntu = "ID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n";
        assert_eq!(debian_codename(ubuntu), None);
        assert_eq!(debian_codename("ID=debian\n"), None);
    }

    #[test]
    fn reads_the_version_in_a_deb_file_name() {
        assert_eq!(
            version_in_file_name(
                "victoria-metrics_1.112.0+ds1-2_amd64.deb",
                "victoria-metrics"
            )
            .as_deref(),
            Some("1.112.0+ds1-2")
        );
        assert_eq!(
            version_in_file_name("wrk_1%3a4.1.0-3_amd64.deb", "wrk").as_deref(),
            Some("1:4.1.0-3")
        );
        assert_eq!(
            version_in_file_name("promtool_2.53_amd64.deb", "prometheus"),
            None
        );
    }

    #[test]
    fn apt_is_confined_to_the_private_folder() {
        let apt = AptDir {
            path: PathBuf::from("/x/apt"),
        };
        let args: Vec<String> = apt
            .command("update")
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for expected in [
            "-oDir::Etc::SourceList=/dev/null",
            "-oDir::Etc::SourceParts=/x/apt/sources",
            "-oDir::State::Lists=/x/apt/lists",
            "-oDir::Cache=/x/apt/cache",
            "-oDir::State::status=/x/apt/status",
        ] {
            assert!(
                args.iter().any(|a| a == expected),
                "{expected} missing from {args:?}"
            );
        }
    }
}
