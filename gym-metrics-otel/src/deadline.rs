//! Running a blocking job with a deadline the caller can count on: the SDK's
//! `force_flush` has no timeout and `shutdown_with_timeout` ignores its
//! argument, so the job runs on a helper thread and the caller stops waiting
//! when the deadline passes.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `job` on a new thread named `name` and waits at most `deadline` for
/// its result. `None` when the deadline passed (the job goes on in the
/// background and its result is dropped) or no thread could be started.
pub(crate) fn run_with_deadline<T: Send + 'static>(
    name: &str,
    deadline: Duration,
    job: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = tx.send(job());
        });
    if spawned.is_err() {
        return None;
    }
    rx.recv_timeout(deadline).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn returns_the_result_in_time() {
        assert_eq!(
            run_with_deadline("t", Duration::from_secs(5), || 7),
            Some(7)
        );
    }

    #[test]
    fn gives_up_at_the_deadline() {
        let start = Instant::now();
        let r = run_with_deadline("t", Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(3));
        });
        assert_eq!(r, None);
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
    }
}
