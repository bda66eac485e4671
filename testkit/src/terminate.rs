//! Stopping a child in order: SIGTERM, then SIGKILL if it outlives its grace.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Sends SIGTERM to `child` and waits up to `grace` for it to exit; kills it
/// (SIGKILL) and reaps it if it has not. Nothing happens to a child that
/// already exited.
///
/// ```
/// let mut child = std::process::Command::new("sleep").arg("30").spawn()?;
/// gym_testkit::terminate(&mut child, std::time::Duration::from_secs(5));
/// assert!(child.try_wait()?.is_some());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn terminate(child: &mut Child, grace: Duration) {
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}
