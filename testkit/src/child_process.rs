//! Running one test of the current test binary in a child process: for
//! scenarios whose failure is the death of the whole process (an abort), so
//! that the parent outlives it and reports how it ended, and for tests that
//! install process-wide state (the facade's recorder, a logger, the `metrics`
//! recorder, environment variables), which cannot share a process.

use std::collections::BTreeSet;
use std::process::{Command, ExitStatus};
use std::sync::{Mutex, PoisonError};

/// Set (to `1`) in the environment of the child [`run_in_child`] starts.
pub const CHILD_ENV: &str = "GYM_TESTKIT_CHILD";

/// True inside a child started by [`run_in_child`]: the test then runs its
/// scenario instead of starting another child.
///
/// ```
/// assert!(!gym_testkit::in_child() || std::env::var_os(gym_testkit::CHILD_ENV).is_some());
/// ```
pub fn in_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Runs the test `name` of the running test binary again, alone, in a child
/// process (`--exact name --nocapture`, with [`CHILD_ENV`] set) and returns
/// what it printed on stdout.
///
/// # Errors
/// The child could not start, or did not exit with success: the message says
/// how it ended (exit code, or the signal that killed it, such as `SIGABRT`
/// from an abort) and carries its stdout and stderr.
///
/// ```no_run
/// #[test]
/// fn survives_thread_exit() -> Result<(), String> {
///     if gym_testkit::in_child() {
///         // the scenario that might abort the process
///         return Ok(());
///     }
///     gym_testkit::run_in_child("survives_thread_exit")?;
///     Ok(())
/// }
/// ```
pub fn run_in_child(name: &str) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("locating the test binary: {e}"))?;
    let output = Command::new(&exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .map_err(|e| format!("starting {} as a child: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        return Ok(stdout);
    }
    Err(format!(
        "the child process running `{name}` {}\n--- its stdout ---\n{stdout}\n--- its stderr ---\n{}",
        ended(output.status),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Gives the calling test a process of its own: `true` when it has run there
/// (alone, in a child, which passed), so the caller returns at once; `false`
/// when this process already is the test's own, so the caller goes on.
///
/// nextest (`cargo xtask ci`) runs every test in a process of its own, and
/// this returns `false` at no cost. Plain `cargo test` runs a binary's tests
/// as threads of one process: there the test runs again, alone, through
/// [`run_in_child`], named by its thread (libtest names each test's thread
/// after the test). A test runs in a child once per process, so a property
/// test that calls this in every case runs its cases once, in the child.
///
/// # Panics
/// The child failed (the panic carries its output and how it ended), or it
/// ran no test (a thread that is not a test's).
///
/// ```no_run
/// #[test]
/// fn installs_the_facade() {
///     if gym_testkit::ran_in_child() {
///         return;
///     }
///     // install a recorder, record, check
/// }
/// ```
pub fn ran_in_child() -> bool {
    if in_child() || std::env::var("NEXTEST_EXECUTION_MODE").as_deref() == Ok("process-per-test") {
        return false;
    }
    let thread = std::thread::current();
    let Some(name) = thread.name().filter(|name| *name != "main") else {
        panic!("ran_in_child: called outside a test's thread (libtest names it after the test)");
    };
    static RAN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    if !RAN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_string())
    {
        return true;
    }
    let stdout = run_in_child(name).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child process ran no test named `{name}`:\n{stdout}"
    );
    print!("{stdout}");
    true
}

/// As [`ran_in_child`], for a test that loads the machine (an attack, a
/// timing comparison): under plain `cargo test` no two such tests of one
/// binary run at once, as nextest's `attacks` test group keeps them in
/// `cargo xtask ci` (`.config/nextest.toml`).
///
/// ```no_run
/// #[test]
/// fn a_flood_does_not_starve_the_scraper() {
///     if gym_testkit::ran_alone_in_child() {
///         return;
///     }
///     // start the endpoint, flood it, scrape
/// }
/// ```
pub fn ran_alone_in_child() -> bool {
    static ALONE: Mutex<()> = Mutex::new(());
    let _alone = ALONE.lock().unwrap_or_else(PoisonError::into_inner);
    ran_in_child()
}

/// How a process ended, in words.
fn ended(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => " (SIGABRT: the process aborted)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => format!("ended with {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_aborts_is_reported_by_its_signal() {
        if in_child() {
            std::process::abort();
        }
        let err =
            run_in_child("child_process::tests::a_child_that_aborts_is_reported_by_its_signal")
                .unwrap_err();
        assert!(err.contains("SIGABRT"), "{err}");
    }

    #[test]
    fn a_child_that_passes_returns_its_stdout() {
        if in_child() {
            println!("from the child");
            return;
        }
        let out =
            run_in_child("child_process::tests::a_child_that_passes_returns_its_stdout").unwrap();
        assert!(out.contains("from the child"), "{out}");
    }

    #[test]
    fn a_test_that_asks_runs_its_body_in_a_process_of_its_own() {
        if ran_in_child() {
            return;
        }
        let nextest = std::env::var("NEXTEST_EXECUTION_MODE").as_deref() == Ok("process-per-test");
        assert!(in_child() || nextest, "the body ran in the shared process");
    }
}
