//! A program run in a real pseudo-terminal of a given size, its screen read
//! back through a terminal emulator (`vt100`): what a person would see,
//! wrapped lines and leftovers of earlier frames included.

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcsetwinsize, Winsize};

/// A child whose standard output and error are a terminal of `columns` ×
/// `rows`, with the screen it draws.
pub struct Terminal {
    child: Child,
    screen: Arc<Mutex<vt100::Parser>>,
    reader: Option<JoinHandle<()>>,
}

impl Terminal {
    /// Starts `command` in a new session (so it has no controlling terminal
    /// but this one's size on its standard output) on a fresh pty.
    ///
    /// ```
    /// let mut command = std::process::Command::new("printf");
    /// command.arg("%050d");
    /// let mut t = gym_testkit::Terminal::start(command, 20, 5)?;
    /// t.wait(std::time::Duration::from_secs(5));
    /// // 50 characters on a 20-column screen take three rows.
    /// assert_eq!(t.screen()[..3], ["0".repeat(20), "0".repeat(20), "0".repeat(10)]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start(mut command: Command, columns: u16, rows: u16) -> std::io::Result<Self> {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let size = Winsize {
            ws_row: rows,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        tcsetwinsize(&master, size)?;
        let name = ptsname(&master, Vec::new())?;
        let slave: OwnedFd = File::options()
            .read(true)
            .write(true)
            .open(name.to_string_lossy().as_ref())?
            .into();
        command
            .stdin(Stdio::null())
            .stdout(slave.try_clone()?)
            .stderr(slave)
            .env("TERM", "xterm-256color");
        // SAFETY: setsid is async-signal-safe and touches no memory of ours.
        unsafe {
            command.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
        }
        let child = command.spawn()?;
        drop(command); // closes this process's copies of the slave
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, columns, 0)));
        let mut master = File::from(master);
        let feed = Arc::clone(&screen);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends when the last holder of the slave exits (EIO on Linux).
            while let Ok(n @ 1..) = master.read(&mut buf) {
                feed.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .process(&buf[..n]);
            }
        });
        Ok(Self {
            child,
            screen,
            reader: Some(reader),
        })
    }

    /// The screen's rows as text, trailing blanks trimmed.
    pub fn screen(&self) -> Vec<String> {
        let parser = self.screen.lock().unwrap_or_else(PoisonError::into_inner);
        let (_, columns) = parser.screen().size();
        parser
            .screen()
            .rows(0, columns)
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `timeout` for the child to exit and its output to be read,
    /// stopping it (SIGTERM, then SIGKILL) if it has not.
    pub fn wait(&mut self, timeout: Duration) {
        let deadline = std::time::Instant::now() + timeout;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        crate::terminate(&mut self.child, Duration::from_secs(5));
        // The last output is read once every holder of the terminal (the
        // child's own children too) has closed it; wait for that, bounded.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.reader.as_ref().is_some_and(|r| !r.is_finished())
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        if self.reader.as_ref().is_some_and(JoinHandle::is_finished) {
            if let Some(reader) = self.reader.take() {
                let _ = reader.join();
            }
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        crate::terminate(&mut self.child, Duration::from_secs(5));
    }
}
