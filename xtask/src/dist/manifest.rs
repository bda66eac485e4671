//! The manifest and checksum written beside each release artifact.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::step::workspace_root;

/// The manifest's file name inside `target/dist/<backend>/`.
pub const MANIFEST_FILE: &str = "manifest.json";

/// What a release artifact is: enough to reproduce and verify it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub backend: String,
    pub version: String,
    pub git_revision: String,
    pub target_triple: String,
    pub binary: String,
    pub size_bytes: u64,
    pub sha256: String,
    pub features: Vec<String>,
    pub checks: Vec<String>,
}

impl Manifest {
    /// Describes `artifact`, built for `backend` with `features`.
    pub fn describe(
        backend: &str,
        features: &[&str],
        artifact: &Path,
        checks: Vec<String>,
    ) -> Result<Self, String> {
        let bytes =
            std::fs::read(artifact).map_err(|e| format!("read {}: {e}", artifact.display()))?;
        let digest = Sha256::digest(&bytes);
        let sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self {
            backend: backend.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: git_revision(),
            target_triple: host_triple()?,
            binary: artifact
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            size_bytes: bytes.len() as u64,
            sha256,
            features: features.iter().map(|f| f.to_string()).collect(),
            checks,
        })
    }

    /// Writes `manifest.json` and `<binary>.sha256` (in `sha256sum -c` format).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let manifest = dir.join(MANIFEST_FILE);
        std::fs::write(&manifest, json + "\n")
            .map_err(|e| format!("write {}: {e}", manifest.display()))?;
        let sum = dir.join(format!("{}.sha256", self.binary));
        std::fs::write(&sum, format!("{}  {}\n", self.sha256, self.binary))
            .map_err(|e| format!("write {}: {e}", sum.display()))
    }

    /// Fails when this artifact is more than `max_growth_percent` larger than
    /// the one described by the manifest at `previous`.
    pub fn compare_size(&self, previous: &Path, max_growth_percent: f64) -> Result<(), String> {
        let text = std::fs::read_to_string(previous)
            .map_err(|e| format!("read baseline {}: {e}", previous.display()))?;
        let old: Manifest = serde_json::from_str(&text)
            .map_err(|e| format!("parse baseline {}: {e}", previous.display()))?;
        let growth = size_growth_percent(old.size_bytes, self.size_bytes);
        println!(
            "{}: {} -> {} bytes ({growth:+.1} %)",
            self.backend, old.size_bytes, self.size_bytes
        );
        if growth > max_growth_percent {
            return Err(format!(
                "{} grew {growth:.1} % ({} -> {} bytes), over the {max_growth_percent} % allowed",
                self.backend, old.size_bytes, self.size_bytes
            ));
        }
        Ok(())
    }
}

/// Percentage by which `new` exceeds `old` (negative when it shrank).
pub fn size_growth_percent(old: u64, new: u64) -> f64 {
    if old == 0 {
        return if new == 0 { 0.0 } else { f64::INFINITY };
    }
    (new as f64 - old as f64) / old as f64 * 100.0
}

fn git_revision() -> String {
    let root = workspace_root();
    let rev = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(&root)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    if dirty {
        format!("{rev}-dirty")
    } else {
        rev
    }
}

fn host_triple() -> Result<String, String> {
    let out = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()
        .map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV printed no host triple".to_string())
}

#[cfg(test)]
mod tests {
    use super::size_growth_percent;

    #[test]
    fn growth_is_relative_to_the_old_size() {
        assert_eq!(size_growth_percent(100, 110), 10.0);
        assert_eq!(size_growth_percent(100, 90), -10.0);
        assert_eq!(size_growth_percent(0, 0), 0.0);
        assert!(size_growth_percent(0, 1).is_infinite());
    }
}
