//! Running a blocking job with a deadline the caller can count on: the SDK's
//! `force_flush` has no timeout and `shutdown_with_timeout` ignores its
//! argument, so the job runs on a helper thread and the caller stops waiting
//! when the deadline passes.

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs `job` on a new thread named `name` and waits at most `deadline` for
/// its result. `None` when the deadline ended the wait, in three cases:
/// - it passed with no result (the job goes on, its result dropped);
/// - a failure arrived only once it had passed: the SDK's own timeouts,
///   also 5 s by default, race ours, and the caller set the deadline;
/// - no thread could be started.
pub(crate) fn run_with_deadline<T: Send + 'static, E: Send + 'static>(
    name: &str,
    deadline: Duration,
    job: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Option<Result<T, E>> {
    let start = Instant::now();
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = tx.send(job());
        });
    if spawned.is_err() {
        return None;
    }
    match rx.recv_timeout(deadline).ok()? {
        Err(_) if start.elapsed() >= deadline => None,
        result => Some(result),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_result_in_time() {
        let r = run_with_deadline("t", Duration::from_secs(5), || Ok::<_, ()>(7));
        assert_eq!(r, Some(Ok(7)));
        let r = run_with_deadline("t", Duration::from_secs(5), || Err::<(), _>("refused"));
        assert_eq!(r, Some(Err("refused")));
    }

    #[test]
    fn gives_up_at_the_deadline() {
        let start = Instant::now();
        let r = run_with_deadline("t", Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(3));
            Ok::<_, ()>(())
        });
        assert_eq!(r, None);
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_failure_that_ends_at_the_deadline_is_the_deadline() {
        // The job's own timeout equals the caller's: whichever wakes first,
        // the caller hears of its deadline, never of the job's timeout.
        let deadline = Duration::from_millis(50);
        for _ in 0..20 {
            let r = run_with_deadline("t", deadline, move || {
                std::thread::sleep(deadline);
                Err::<(), _>("job's own timeout")
            });
            assert_eq!(r, None);
        }
    }
}
