//! A ready Prometheus scrape configuration for the fleet's `/metrics` endpoints.

use std::path::Path;
use std::time::Duration;

/// How often the written configuration scrapes (and evaluates) the fleet.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// The configuration text: one job scraping every `host:port` in `targets`
/// every [`SCRAPE_INTERVAL`].
pub fn render(targets: &[String]) -> String {
    let interval = SCRAPE_INTERVAL.as_secs();
    let list = targets
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "# Written by gym-fleet: prometheus --config.file=THIS_FILE\n\
         global:\n  scrape_interval: {interval}s\n  evaluation_interval: {interval}s\n\
         scrape_configs:\n  - job_name: gym-fleet\n    static_configs:\n      - targets: [{list}]\n"
    )
}

/// Writes [`render`] to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, targets: &[String]) -> std::io::Result<()> {
    std::fs::write(path, render(targets))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_every_target() {
        let text = super::render(&["127.0.0.1:9464".into(), "127.0.0.1:9465".into()]);
        assert!(
            text.contains("targets: ['127.0.0.1:9464', '127.0.0.1:9465']"),
            "{text}"
        );
        assert!(text.contains("scrape_interval: 1s"));
    }

    #[test]
    fn promtool_accepts_it() {
        let Some(promtool) = gym_testkit::require(gym_testkit::Tool::Promtool) else {
            return;
        };
        let path = std::env::temp_dir().join(format!("gym-fleet-{}.yml", std::process::id()));
        super::write(&path, &["127.0.0.1:9464".into()]).unwrap();
        let out = std::process::Command::new(promtool)
            .args(["check", "config"])
            .arg(&path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
