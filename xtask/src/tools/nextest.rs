//! cargo-nextest, the runner `cargo xtask ci` runs the tests with: used as
//! found, else installed from the crate registry (`cargo install --locked`).

use crate::step::cargo;

use super::run::checked;

/// The version nextest prints, after installing it when `cargo nextest` is
/// missing.
///
/// # Errors
/// `cargo install` failed, or the installed runner does not start.
pub fn provision() -> Result<String, String> {
    if let Some(version) = version() {
        return Ok(version);
    }
    checked(
        "cargo-nextest",
        "cargo install --locked cargo-nextest",
        cargo().args(["install", "--locked", "cargo-nextest"]),
    )?;
    version().ok_or_else(|| "cargo-nextest: installed, but `cargo nextest` does not start".into())
}

/// `cargo nextest --version`'s first line, when it runs.
fn version() -> Option<String> {
    let output = cargo().args(["nextest", "--version"]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    output
        .status
        .success()
        .then(|| text.lines().next().unwrap_or_default().to_string())
}
