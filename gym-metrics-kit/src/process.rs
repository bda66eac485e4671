//! This process's own resource use, read when a backend is scraped or
//! collects (feature `process-metrics`): what both backends'
//! `with_process_metrics` export, each under its own names (the Prometheus
//! client convention on the prom path, OpenTelemetry's `process.*` semantic
//! conventions on the otel path).
//!
//! Read with the [`procfs`](https://docs.rs/procfs) crate (Linux's `/proc`,
//! a maintained parser of its formats) rather than by hand, and directly
//! rather than through `metrics-process`: that crate writes through the
//! `metrics` crate, so its values would reach an exposition only through a
//! `metrics` bridge, with the bridge's naming and scope labels (not the
//! Prometheus client names) and not at all on a backend built without the
//! bridge; reading the values here lets each backend write them as its own
//! families or observable instruments, at scrape or collection time.
//! Elsewhere than Linux nothing is read: [`ProcessReading::read`] answers
//! [`ProcessReadError::Unsupported`], and [`available`] says so once.
//!
//! ```
//! use gym_metrics_kit::process::ProcessReading;
//! # #[cfg(target_os = "linux")] {
//! let reading = ProcessReading::read()?;
//! assert!(reading.threads >= 1);
//! assert!(reading.resident_bytes > 0 && reading.virtual_bytes >= reading.resident_bytes);
//! assert!(reading.open_fds >= 3); // at least stdin, stdout, stderr here
//! assert!(reading.start_time_seconds > 1.0e9); // seconds since the Unix epoch
//! # }
//! # Ok::<(), gym_metrics_kit::process::ProcessReadError>(())
//! ```

use std::sync::atomic::{AtomicBool, Ordering};

/// One reading of this process's resource use.
///
/// ```
/// use gym_metrics_kit::process::ProcessReading;
/// if let Ok(r) = ProcessReading::read() {
///     assert_eq!(r.cpu_seconds(), r.cpu_user_seconds + r.cpu_system_seconds);
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ProcessReading {
    /// CPU time spent in user mode, in seconds (all threads, since start).
    pub cpu_user_seconds: f64,
    /// CPU time spent in kernel mode, in seconds (all threads, since start).
    pub cpu_system_seconds: f64,
    /// Resident set size, in bytes.
    pub resident_bytes: u64,
    /// Virtual memory size, in bytes.
    pub virtual_bytes: u64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The soft limit on open file descriptors (`RLIMIT_NOFILE`); `None`
    /// when unlimited.
    pub max_fds: Option<u64>,
    /// OS threads of the process.
    pub threads: u64,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time_seconds: f64,
}

impl ProcessReading {
    /// User plus system CPU time, in seconds.
    ///
    /// ```
    /// use gym_metrics_kit::process::ProcessReading;
    /// if let Ok(r) = ProcessReading::read() {
    ///     assert!(r.cpu_seconds() >= r.cpu_user_seconds);
    /// }
    /// ```
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_user_seconds + self.cpu_system_seconds
    }

    /// Reads this process's values now (`/proc/self/stat`, `/proc/self/fd`,
    /// `/proc/self/limits`; the start time once per process).
    ///
    /// # Errors
    /// [`ProcessReadError::Unsupported`] elsewhere than Linux;
    /// [`ProcessReadError::Proc`] when `/proc` cannot be read (not mounted,
    /// or hidden by a sandbox).
    ///
    /// ```
    /// use gym_metrics_kit::process::{ProcessReadError, ProcessReading};
    /// match ProcessReading::read() {
    ///     Ok(r) => assert!(r.threads >= 1),
    ///     Err(ProcessReadError::Unsupported) => assert!(!cfg!(target_os = "linux")),
    ///     Err(e) => panic!("{e}"),
    /// }
    /// ```
    pub fn read() -> Result<Self, ProcessReadError> {
        imp::read()
    }
}

/// Why process metrics could not be read.
///
/// ```
/// let e = gym_metrics_kit::process::ProcessReadError::Unsupported;
/// assert!(e.to_string().contains("Linux"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessReadError {
    /// Not Linux: there is no `/proc` to read.
    #[error("process metrics are read from Linux's /proc and this is not Linux: drop with_process_metrics() here, or use a node or cAdvisor exporter for this host")]
    Unsupported,
    /// `/proc` could not be read.
    #[error("cannot read /proc/self ({0}): process metrics need /proc mounted and readable (a sandbox or container may hide it)")]
    Proc(String),
}

/// Whether process metrics can be read here (on Linux). Elsewhere logs,
/// once per process, that `with_process_metrics()` of `backend` has no
/// effect, and answers `false`: the backend then adds nothing.
///
/// ```
/// let here = gym_metrics_kit::process::available("doc");
/// assert_eq!(here, cfg!(target_os = "linux"));
/// assert_eq!(gym_metrics_kit::process::available("doc"), here);
/// ```
pub fn available(backend: &str) -> bool {
    static LOGGED: AtomicBool = AtomicBool::new(false);
    if cfg!(target_os = "linux") {
        return true;
    }
    if !LOGGED.swap(true, Ordering::Relaxed) {
        log::warn!(
            "{backend}: with_process_metrics() has no effect here: {}",
            ProcessReadError::Unsupported
        );
    }
    false
}

/// Logs the first failure to read `/proc` (later ones are the same failure).
///
/// ```
/// use gym_metrics_kit::process::{log_read_failure_once, ProcessReadError};
/// log_read_failure_once("doc", &ProcessReadError::Proc("gone".into()));
/// ```
pub fn log_read_failure_once(backend: &str, error: &ProcessReadError) {
    static LOGGED: AtomicBool = AtomicBool::new(false);
    if !LOGGED.swap(true, Ordering::Relaxed) {
        log::warn!(
            "{backend}: process metrics left out of this and later scrapes while it fails: {error}"
        );
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::OnceLock;

    use procfs::process::{LimitValue, Process};
    use procfs::WithCurrentSystemInfo;

    use super::{ProcessReadError, ProcessReading};

    fn proc_error(e: procfs::ProcError) -> ProcessReadError {
        ProcessReadError::Proc(e.to_string())
    }

    pub(super) fn read() -> Result<ProcessReading, ProcessReadError> {
        let me = Process::myself().map_err(proc_error)?;
        let stat = me.stat().map_err(proc_error)?;
        let ticks = procfs::ticks_per_second() as f64;
        let open_fds = me.fd_count().map_err(proc_error)? as u64;
        let max_fds = match me.limits().map_err(proc_error)?.max_open_files.soft_limit {
            LimitValue::Value(n) => Some(n),
            LimitValue::Unlimited => None,
        };
        Ok(ProcessReading {
            cpu_user_seconds: stat.utime as f64 / ticks,
            cpu_system_seconds: stat.stime as f64 / ticks,
            resident_bytes: stat.rss_bytes().get(),
            virtual_bytes: stat.vsize,
            open_fds,
            max_fds,
            threads: u64::try_from(stat.num_threads).unwrap_or(0),
            start_time_seconds: start_time_seconds(stat.starttime, ticks)?,
        })
    }

    /// The boot time plus the start's clock ticks since boot, as the Go and
    /// Python clients compute it; once, as it never changes.
    fn start_time_seconds(ticks_since_boot: u64, ticks: f64) -> Result<f64, ProcessReadError> {
        static START: OnceLock<f64> = OnceLock::new();
        if let Some(start) = START.get() {
            return Ok(*start);
        }
        let boot = procfs::boot_time_secs().map_err(proc_error)? as f64;
        Ok(*START.get_or_init(|| boot + ticks_since_boot as f64 / ticks))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{ProcessReadError, ProcessReading};

    pub(super) fn read() -> Result<ProcessReading, ProcessReadError> {
        Err(ProcessReadError::Unsupported)
    }
}
