//! A ready Prometheus scrape configuration for the fleet: one job that
//! discovers every process from the orchestrator's `GET /sd`.

use std::path::Path;
use std::time::Duration;

/// How often the written configuration scrapes (and evaluates) the fleet,
/// and re-reads the discovered target list.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// The configuration text: one job scraping every target the orchestrator
/// lists at `sd_url` (the orchestrator itself included), every
/// [`SCRAPE_INTERVAL`].
pub fn render(sd_url: &str) -> String {
    let interval = SCRAPE_INTERVAL.as_secs();
    format!(
        "# Written by gym-fleet: prometheus --config.file=THIS_FILE\n\
         # The orchestrator lists every live process (itself included) at {sd_url}.\n\
         global:\n  scrape_interval: {interval}s\n  evaluation_interval: {interval}s\n\
         scrape_configs:\n  - job_name: gym-fleet\n    http_sd_configs:\n      - url: '{sd_url}'\n        refresh_interval: {interval}s\n"
    )
}

/// Writes [`render`] to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, sd_url: &str) -> std::io::Result<()> {
    std::fs::write(path, render(sd_url))
}

#[cfg(test)]
mod tests {
    #[test]
    fn discovers_from_the_orchestrator() {
        let text = super::render("http://127.0.0.1:9464/sd");
        assert!(
            text.contains("http_sd_configs:\n      - url: 'http://127.0.0.1:9464/sd'"),
            "{text}"
        );
        assert!(!text.contains("static_configs"), "{text}");
        assert!(text.contains("scrape_interval: 1s"));
        assert!(text.contains("refresh_interval: 1s"));
    }

    #[test]
    fn promtool_accepts_it() {
        let Some(promtool) = gym_testkit::require(gym_testkit::Tool::Promtool) else {
            return;
        };
        let path = std::env::temp_dir().join(format!("gym-fleet-{}.yml", std::process::id()));
        super::write(&path, "http://127.0.0.1:9464/sd").unwrap();
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
