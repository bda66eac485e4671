//! Where a bench binary leaves its figures: `$GYM_BENCH_OUT/<name>.json`
//! when `cargo xtask bench` sets that variable, nowhere otherwise.

use std::path::PathBuf;

use serde_json::Value;

/// The environment variable naming the output directory.
pub const OUT_VAR: &str = "GYM_BENCH_OUT";

/// A bench binary's JSON document, written on [`Output::write`].
#[derive(Debug)]
pub struct Output {
    name: &'static str,
    document: serde_json::Map<String, Value>,
}

impl Output {
    /// An empty document that will be written as `<name>.json`.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            document: serde_json::Map::new(),
        }
    }

    /// Sets `key` to `value`.
    pub fn set(&mut self, key: &str, value: Value) {
        self.document.insert(key.to_string(), value);
    }

    /// Writes the document if [`OUT_VAR`] is set.
    ///
    /// # Errors
    /// The directory or the file could not be written.
    pub fn write(self) -> std::io::Result<()> {
        let Some(dir) = std::env::var_os(OUT_VAR).map(PathBuf::from) else {
            return Ok(());
        };
        std::fs::create_dir_all(&dir)?;
        let text = serde_json::to_string_pretty(&Value::Object(self.document))?;
        std::fs::write(dir.join(format!("{}.json", self.name)), text)
    }
}
