//! A `log` logger that keeps this backend's lines, for asserting rate limits.

use std::sync::Mutex;

pub struct CountingLogger {
    lines: Mutex<Vec<(log::Level, String)>>,
}

static LOGGER: CountingLogger = CountingLogger {
    lines: Mutex::new(Vec::new()),
};

impl CountingLogger {
    /// Installs the logger (once per test binary) and returns it.
    pub fn install() -> &'static CountingLogger {
        let _ = log::set_logger(&LOGGER);
        log::set_max_level(log::LevelFilter::Info);
        &LOGGER
    }

    /// Lines of `level` from gym_metrics_otel.
    pub fn lines(&self, level: log::Level) -> Vec<String> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, m)| m.clone())
            .collect()
    }
}

impl log::Log for CountingLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.target() == "gym_metrics_otel"
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!("[{}] {}", record.level(), record.args());
            self.lines
                .lock()
                .unwrap()
                .push((record.level(), record.args().to_string()));
        }
    }
    fn flush(&self) {}
}
