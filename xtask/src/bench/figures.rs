//! The figures the bench binaries wrote (`<out>/<bench>.json`), read back
//! with the lookups the report needs.

use std::path::Path;

use serde_json::Value;

/// One bench binary's JSON document, or why it is missing.
#[derive(Debug, Clone)]
pub struct Doc(pub Result<Value, String>);

impl Doc {
    /// Reads `<dir>/<name>.json`.
    pub fn load(dir: &Path, name: &str) -> Self {
        let path = dir.join(format!("{name}.json"));
        Doc(std::fs::read_to_string(&path)
            .map_err(|e| format!("{} not written: {e}", path.display()))
            .and_then(|t| serde_json::from_str(&t).map_err(|e| format!("{}: {e}", path.display()))))
    }

    /// The value at `pointer` (a JSON pointer such as `/render_bytes/prometheus`).
    pub fn at(&self, pointer: &str) -> Option<&Value> {
        self.0.as_ref().ok()?.pointer(pointer)
    }

    /// The number at `pointer`.
    pub fn num(&self, pointer: &str) -> Option<f64> {
        self.at(pointer)?.as_f64()
    }

    /// The rows of a measured table (`threads_1`, `render`, …).
    pub fn rows(&self, table: &str) -> Vec<Row> {
        self.at(&format!("/{table}"))
            .and_then(Value::as_array)
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| {
                        let num = |k: &str| r.get(k).and_then(Value::as_f64);
                        Some(Row {
                            name: r.get("name")?.as_str()?.to_string(),
                            median_ns: num("median_ns"),
                            low_ns: num("low_ns"),
                            high_ns: num("high_ns"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The median of the row whose name starts with `prefix`, if measured.
    pub fn median(&self, table: &str, prefix: &str) -> Option<f64> {
        self.rows(table)
            .into_iter()
            .find(|r| r.name.starts_with(prefix))
            .and_then(|r| r.median_ns)
    }

    /// The fastest peer's name and median in `table` (see [`is_peer`]).
    pub fn fastest_peer(&self, table: &str) -> Option<(String, f64)> {
        let peers = self.rows(table).into_iter().filter(|r| is_peer(&r.name));
        let measured = peers.filter_map(|r| Some((r.name, r.median_ns?)));
        measured.min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Why the document is missing, if it is.
    pub fn error(&self) -> Option<&str> {
        self.0.as_ref().err().map(String::as_str)
    }
}

/// One row: a candidate and criterion's estimate of it (absent in quick
/// mode, where nothing is timed).
#[derive(Debug, Clone)]
pub struct Row {
    /// The candidate.
    pub name: String,
    /// Criterion's median, ns per call.
    pub median_ns: Option<f64>,
    /// The lower bound of the median's confidence interval (95%), ns.
    pub low_ns: Option<f64>,
    /// The upper bound, ns.
    pub high_ns: Option<f64>,
}

/// The peers of the record-path table: every histogram record that is
/// neither ours nor the empty loop.
pub fn is_peer(name: &str) -> bool {
    // A counter increment (the `metrics` bridges' rows) is no histogram
    // record: it is compared with its own kind in its row, not a peer of ours.
    !name.starts_with("gym-metrics") && !name.starts_with("empty") && !name.contains("Counter::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_other_libraries_histogram_records() {
        assert!(is_peer("prometheus-client 0.26 Histogram::observe"));
        assert!(!is_peer(
            "metrics 0.24 (exporter-prometheus) Counter::increment"
        ));
        assert!(!is_peer("gym-metrics-prom record_rollout_duration"));
        assert!(!is_peer("empty loop"));
    }
}
