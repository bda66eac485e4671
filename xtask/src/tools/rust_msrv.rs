//! The oldest Rust the library crates declare (`rust-version = "1.85"`), as
//! Debian ships it: trixie's rustc and cargo 1.85.1 in a debootstrap folder
//! of the project's own, `target/tools/trixie-rust/`, entered with `chroot`.
//!
//! debootstrap itself comes from trixie's package, unpacked like every other
//! tool; it and `chroot` need root (CI and this machine kind run as root).

use std::path::{Path, PathBuf};
use std::process::Command;

use gym_testkit::tools_dir;

use super::apt::{self, AptSession, MIRROR};
use super::lock::ToolsLock;
use super::run::checked;
use super::spec::{DebPackage, Suite};

const DEBOOTSTRAP: DebPackage = DebPackage {
    name: "debootstrap",
    suite: Suite::Trixie,
};
/// What the folder holds beyond a minimal base: the compiler, cargo, and
/// the C library headers rustc's linker needs (`libc-dev` is a virtual
/// package, which debootstrap does not resolve).
const INCLUDE: &str = "--include=libc6-dev,rustc,cargo";

/// `target/tools/trixie-rust/`: the root folder the toolchain runs in.
pub fn root() -> PathBuf {
    tools_dir().join("trixie-rust")
}

/// `cargo --version` inside the folder, after making it when it is missing.
///
/// # Errors
/// Not root, or debootstrap failed (the message has its output's tail).
pub fn provision() -> Result<String, String> {
    let root = root();
    if let Ok(version) = version(&root) {
        return Ok(version);
    }
    let dir = tools_dir();
    let _lock = ToolsLock::acquire(&dir)?;
    let mut session = AptSession::new(&dir, [Suite::Trixie]);
    session.download(&[DEBOOTSTRAP])?;
    apt::unpack(&dir, &DEBOOTSTRAP)?;
    // Made under another name and renamed when whole, so that a folder that
    // exists is never a half-made one.
    let partial = dir.join("trixie-rust.partial");
    let _ = std::fs::remove_dir_all(&partial);
    let unpacked = dir.join("root");
    checked(
        "trixie-rust",
        "debootstrap",
        Command::new(unpacked.join("usr/sbin/debootstrap"))
            .env("DEBOOTSTRAP_DIR", unpacked.join("usr/share/debootstrap"))
            .args(["--variant=minbase", INCLUDE, "trixie"])
            .arg(&partial)
            .arg(MIRROR),
    )?;
    let _ = std::fs::remove_dir_all(&root);
    std::fs::rename(&partial, &root)
        .map_err(|e| format!("trixie-rust: cannot rename {}: {e}", partial.display()))?;
    version(&root)
}

/// `cargo --version` run inside `root`.
fn version(root: &Path) -> Result<String, String> {
    let output = Command::new("chroot")
        .arg(root)
        .args(["cargo", "--version"])
        .output()
        .map_err(|e| format!("trixie-rust: cannot run chroot: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if output.status.success() && !text.is_empty() {
        Ok(text)
    } else {
        Err(format!(
            "trixie-rust: `chroot {} cargo --version` failed ({})",
            root.display(),
            output.status
        ))
    }
}
