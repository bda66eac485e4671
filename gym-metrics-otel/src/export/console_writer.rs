//! Where the console exporter writes: standard output unless a test or an
//! application hands in another writer.

use std::fmt;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// A shared, lockable sink for the console exporter's JSON lines.
#[derive(Clone)]
pub(crate) struct ConsoleWriter(Arc<Mutex<Box<dyn Write + Send>>>);

impl ConsoleWriter {
    /// Wraps `writer`.
    pub(crate) fn new(writer: impl Write + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(Box::new(writer))))
    }

    /// Standard output.
    pub(crate) fn stdout() -> Self {
        Self::new(std::io::stdout())
    }

    /// Writes `line` and a newline, then flushes, as one locked operation.
    pub(crate) fn write_line(&self, line: &str) -> std::io::Result<()> {
        // A poisoned lock only means another export panicked mid-write; the
        // writer itself is still usable.
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

impl fmt::Debug for ConsoleWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConsoleWriter")
    }
}
