//! Running one test of the current test binary in a child process, for
//! scenarios whose failure is the death of the whole process (an abort): the
//! parent outlives it and reports how it ended.

use std::process::{Command, ExitStatus};

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
/// fn survives_thread_exit() {
///     if gym_testkit::in_child() {
///         // the scenario that might abort the process
///         return;
///     }
///     let stdout = gym_testkit::run_in_child("survives_thread_exit").unwrap_or_else(|e| panic!("{e}"));
///     assert!(stdout.contains("test survives_thread_exit ... ok"));
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
}
