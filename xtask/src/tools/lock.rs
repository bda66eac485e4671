//! One `cargo xtask tools` at a time per workspace (engineers share `target/tools`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const WAIT_AT_MOST: Duration = Duration::from_secs(600);

/// A lock folder `target/tools/.lock` holding the owner's PID; removed on drop.
#[derive(Debug)]
pub struct ToolsLock {
    path: PathBuf,
}

impl ToolsLock {
    /// Takes the lock, waiting for a live owner and taking over from a dead one.
    pub fn acquire(tools_dir: &Path) -> Result<Self, String> {
        let path = tools_dir.join(".lock");
        let start = Instant::now();
        let mut told = false;
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    let _ = std::fs::write(path.join("pid"), std::process::id().to_string());
                    return Ok(Self { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(path.join("pid")).unwrap_or_default();
                    let owner = owner.trim();
                    let dead = if owner.is_empty() {
                        // Just created, PID not written yet; or its owner died at once.
                        start.elapsed() > Duration::from_secs(2)
                    } else {
                        !Path::new("/proc").join(owner).exists()
                    };
                    if dead {
                        let _ = std::fs::remove_dir_all(&path);
                        continue;
                    }
                    if !told {
                        eprintln!("tools: waiting for another `cargo xtask tools` (pid {owner:?}) to finish");
                        told = true;
                    }
                    if start.elapsed() > WAIT_AT_MOST {
                        return Err(format!(
                            "tools: {} is held by pid {owner:?} for too long",
                            path.display()
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(format!("tools: cannot create {}: {e}", path.display())),
            }
        }
    }
}

impl Drop for ToolsLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
