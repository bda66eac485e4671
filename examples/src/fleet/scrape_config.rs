//! A ready Prometheus scrape configuration for the fleet: one job that
//! discovers every process from the orchestrator's `GET /sd`, over https with
//! basic auth when the fleet serves by a web configuration (`--web-config`).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the written configuration scrapes (and evaluates) the fleet,
/// and re-reads the discovered target list.
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
    /// The `tls_config` and `basic_auth` lines (none for a plain, open
    /// fleet), indented by `indent`: the scrape job and the `/sd` request
    /// both need them, since the endpoint guards every path alike.
    fn client_lines(&self, indent: &str) -> String {
        let mut lines = String::new();
        if let Some(ca) = &self.tls_ca_file {
            lines.push_str(&format!(
                "{indent}tls_config:\n{indent}  ca_file: {}\n",
                quoted(&ca.display().to_string())
            ));
        }
        if let Some((user, password_file)) = &self.basic_auth {
            lines.push_str(&format!(
                "{indent}basic_auth:\n{indent}  username: {}\n{indent}  password_file: {}\n",
                quoted(user),
                quoted(&password_file.display().to_string())
            ));
        }
        lines
    }

    /// `https` with a CA, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls_ca_file.is_some() {
            "https"
        } else {
            "http"
        }
    }
}

/// The orchestrator's memory gauges (NeMo Gym's memory profiling) name the
/// server they measure in `nemo_gym_server_name`/`_type`, which meet the
/// orchestrator's own discovered labels: Prometheus keeps the discovered
/// ones and renames the scraped ones `exported_…`. These rules put the
/// scraped names back (where there is one), as a Gym orchestrator's reach
/// Prometheus over OTLP, and drop the `exported_…` copies (on `target_info`
/// they equal the discovered ones).
const SERVER_LABELS_OF_MEMORY_GAUGES: &str = "    metric_relabel_configs:
      - source_labels: [exported_nemo_gym_server_name]
        regex: (.+)
        target_label: nemo_gym_server_name
      - source_labels: [exported_nemo_gym_server_type]
        regex: (.+)
        target_label: nemo_gym_server_type
      - regex: exported_nemo_gym_server_(name|type)
        action: labeldrop
";

/// A YAML single-quoted scalar.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The configuration text: one job scraping every target the orchestrator
/// lists at `sd_url` (the orchestrator itself included), every
/// [`SCRAPE_INTERVAL`], as `security` says.
pub fn render(sd_url: &str, security: &ScrapeSecurity) -> String {
    let interval = SCRAPE_INTERVAL.as_secs();
    let scheme = if security.tls_ca_file.is_some() {
        "    scheme: https\n"
    } else {
        ""
    };
    format!(
        "# Written by gym-fleet: prometheus --config.file=THIS_FILE\n\
         # The orchestrator lists every live process (itself included) at {sd_url}.\n\
         global:\n  scrape_interval: {interval}s\n  evaluation_interval: {interval}s\n\
         scrape_configs:\n  - job_name: gym-fleet\n{scheme}{job}    http_sd_configs:\n      - url: {url}\n        refresh_interval: {interval}s\n{sd}{relabel}",
        job = security.client_lines("    "),
        url = quoted(sd_url),
        sd = security.client_lines("        "),
        relabel = SERVER_LABELS_OF_MEMORY_GAUGES,
    )
}

/// Writes [`render`] to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, sd_url: &str, security: &ScrapeSecurity) -> std::io::Result<()> {
    std::fs::write(path, render(sd_url, security))
}

#[cfg(test)]
mod tests {
    #[test]
    fn discovers_from_the_orchestrator() {
        let text = super::render(
            "http://127.0.0.1:9464/sd",
            &super::ScrapeSecurity::default(),
        );
        assert!(
            text.contains("http_sd_configs:\n      - url: 'http://127.0.0.1:9464/sd'"),
            "{text}"
        );
        assert!(!text.contains("static_configs"), "{text}");
        assert!(
            text.ends_with(super::SERVER_LABELS_OF_MEMORY_GAUGES),
            "{text}"
        );
        assert!(text.contains("scrape_interval: 1s"));
        assert!(text.contains("refresh_interval: 1s"));
        assert!(!text.contains("https") && !text.contains("basic_auth"));
    }

    #[test]
    fn a_web_configured_fleet_is_scraped_and_discovered_over_https_with_basic_auth() {
        let security = super::ScrapeSecurity {
            tls_ca_file: Some("/etc/gym/ca.crt".into()),
            basic_auth: Some(("prom'x".into(), "/etc/gym/pw".into())),
        };
        let text = super::render("https://127.0.0.1:9464/sd", &security);
        assert!(
            text.contains(
                "    scheme: https\n    tls_config:\n      ca_file: '/etc/gym/ca.crt'\n\
                 \x20   basic_auth:\n      username: 'prom''x'\n      password_file: '/etc/gym/pw'\n\
                 \x20   http_sd_configs:\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "        refresh_interval: 1s\n        tls_config:\n          ca_file: '/etc/gym/ca.crt'\n\
                 \x20       basic_auth:\n          username: 'prom''x'\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn promtool_accepts_it() {
        let promtool = gym_testkit::require(gym_testkit::Tool::Promtool);
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
        for security in [super::ScrapeSecurity::default(), security] {
            super::write(&path, "https://127.0.0.1:9464/sd", &security).unwrap();
            let out = std::process::Command::new(&promtool)
                .args(["check", "config"])
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&ca);
        let _ = std::fs::remove_file(&password);
    }
}
