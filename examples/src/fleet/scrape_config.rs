//! A ready Prometheus scrape configuration for the fleet's `/metrics` endpoints.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the written configuration scrapes (and evaluates) the fleet.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// How a fleet served by a web configuration (`--web-config`) is scraped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrapeSecurity {
    /// `scheme: https`, trusting this CA (`tls_config.ca_file`).
    pub tls_ca_file: Option<PathBuf>,
    /// `basic_auth`: this user, its password read from this file.
    pub basic_auth: Option<(String, PathBuf)>,
}

impl ScrapeSecurity {
    /// The job's lines for it (none for a plain, open fleet).
    fn job_lines(&self) -> String {
        let mut lines = String::new();
        if let Some(ca) = &self.tls_ca_file {
            lines.push_str(&format!(
                "    scheme: https\n    tls_config:\n      ca_file: {}\n",
                quoted(&ca.display().to_string())
            ));
        }
        if let Some((user, password_file)) = &self.basic_auth {
            lines.push_str(&format!(
                "    basic_auth:\n      username: {}\n      password_file: {}\n",
                quoted(user),
                quoted(&password_file.display().to_string())
            ));
        }
        lines
    }
}

/// A YAML single-quoted scalar.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The configuration text: one job scraping every `host:port` in `targets`
/// every [`SCRAPE_INTERVAL`], as `security` says.
pub fn render(targets: &[String], security: &ScrapeSecurity) -> String {
    let interval = SCRAPE_INTERVAL.as_secs();
    let list = targets
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "# Written by gym-fleet: prometheus --config.file=THIS_FILE\n\
         global:\n  scrape_interval: {interval}s\n  evaluation_interval: {interval}s\n\
         scrape_configs:\n  - job_name: gym-fleet\n{security}    static_configs:\n      - targets: [{list}]\n",
        security = security.job_lines()
    )
}

/// Writes [`render`] to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, targets: &[String], security: &ScrapeSecurity) -> std::io::Result<()> {
    std::fs::write(path, render(targets, security))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_every_target() {
        let text = super::render(
            &["127.0.0.1:9464".into(), "127.0.0.1:9465".into()],
            &super::ScrapeSecurity::default(),
        );
        assert!(
            text.contains("targets: ['127.0.0.1:9464', '127.0.0.1:9465']"),
            "{text}"
        );
        assert!(text.contains("scrape_interval: 1s"));
        assert!(!text.contains("https") && !text.contains("basic_auth"));
    }

    #[test]
    fn a_web_configured_fleet_is_scraped_over_https_with_basic_auth() {
        let security = super::ScrapeSecurity {
            tls_ca_file: Some("/etc/gym/ca.crt".into()),
            basic_auth: Some(("prom'x".into(), "/etc/gym/pw".into())),
        };
        let text = super::render(&["127.0.0.1:9464".into()], &security);
        assert!(
            text.contains(
                "    scheme: https\n    tls_config:\n      ca_file: '/etc/gym/ca.crt'\n\
                 \x20   basic_auth:\n      username: 'prom''x'\n      password_file: '/etc/gym/pw'\n\
                 \x20   static_configs:\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn promtool_accepts_it() {
        let Some(promtool) = gym_testkit::require(gym_testkit::Tool::Promtool) else {
            return;
        };
        let path = std::env::temp_dir().join(format!("gym-fleet-{}.yml", std::process::id()));
        // With every key a web-configured fleet adds (promtool checks that
        // the files they name exist).
        let dir = std::env::temp_dir();
        let ca = dir.join(format!("gym-fleet-ca-{}.crt", std::process::id()));
        let password = dir.join(format!("gym-fleet-pw-{}", std::process::id()));
        std::fs::write(&ca, "").unwrap();
        std::fs::write(&password, "secret\n").unwrap();
        let security = super::ScrapeSecurity {
            tls_ca_file: Some(ca.clone()),
            basic_auth: Some(("prometheus".into(), password.clone())),
        };
        super::write(&path, &["127.0.0.1:9464".into()], &security).unwrap();
        let out = std::process::Command::new(promtool)
            .args(["check", "config"])
            .arg(&path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&ca);
        let _ = std::fs::remove_file(&password);
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
