//! Launching a child: re-execute this binary with a subcommand, read its
//! status lines and its logs, and learn how it exited.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};

use super::protocol::{self, Event};

/// What a child's watcher tasks tell the orchestrator; `usize` is the child's
/// position in the roster.
#[derive(Debug)]
pub enum Message {
    /// A status line.
    Event(usize, Event),
    /// A log line from its standard error.
    Log(usize, String),
    /// It exited (after its last output line was delivered): how.
    Exited(usize, Result<std::process::ExitStatus, String>),
}

/// A running child's handles.
pub struct Launched {
    /// Its process id.
    pub pid: Option<u32>,
    /// Dropping it closes the child's standard input: the stop request.
    pub stdin: Option<ChildStdin>,
    /// Sending on it kills the child.
    pub kill: oneshot::Sender<()>,
}

/// Starts this binary with `args`, and `env` added to its environment, as
/// the child at `position`. It runs in its
/// own process group, so a Ctrl-C in the terminal reaches the orchestrator only,
/// which then stops the fleet in order.
///
/// # Errors
/// The current executable cannot be found or started.
pub fn launch(
    position: usize,
    args: &[String],
    env: &[(&str, std::ffi::OsString)],
    to_orchestrator: mpsc::UnboundedSender<Message>,
) -> std::io::Result<Launched> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id();
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();

    let tx = to_orchestrator.clone();
    let events = tokio::spawn(async move {
        let Some(stdout) = stdout else { return };
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match protocol::parse(&line) {
                Some(event) => {
                    let _ = tx.send(Message::Event(position, event));
                }
                None => {
                    let _ = tx.send(Message::Log(position, line));
                }
            }
        }
    });
    let tx = to_orchestrator.clone();
    let logs = tokio::spawn(async move {
        let Some(stderr) = stderr else { return };
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let _ = tx.send(Message::Log(position, line));
        }
    });

    let (kill, killed) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            Ok(()) = killed => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        // Deliver every line it wrote before saying it exited.
        let _ = events.await;
        let _ = logs.await;
        let _ = to_orchestrator.send(Message::Exited(position, status.map_err(|e| e.to_string())));
    });
    Ok(Launched { pid, stdin, kill })
}
