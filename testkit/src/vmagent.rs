//! A throwaway vmagent on loopback: discovers its targets from an HTTP SD
//! URL, scrapes them and remote-writes every sample to a VictoriaMetrics.

use std::process::Command;
use std::time::Duration;

use crate::http::http_get;
use crate::port::free_port;
use crate::server::{retry_on_port_clash, Server};
use crate::temp_dir::TempDir;
use crate::tool::{tool_path, Tool};

/// vmagent on `127.0.0.1:<free port>` with a temp dir for its config and
/// remote-write buffer; killed by PID on drop (and its temp dir removed).
#[derive(Debug)]
pub struct Vmagent {
    port: u16,
    server: Server,
    /// The configuration [`Vmagent::start`] wrote; removed after the server
    /// (fields drop in order) is dead.
    _config: Option<TempDir>,
}

impl Vmagent {
    /// Starts vmagent scraping, every `interval`, each target listed at
    /// `sd_url` (re-read every `interval` too), and remote-writing to
    /// `remote_write_url` (e.g. VictoriaMetrics' `/api/v1/write`). Waits
    /// until it answers `/health`. A cluster member runs on
    /// [`Vmagent::start_with_flags`], from the kit's deploy files.
    pub fn start(sd_url: &str, remote_write_url: &str, interval: Duration) -> Result<Self, String> {
        let every = format!("{}ms", interval.as_millis().max(1));
        let dir = TempDir::new("vmagent-config")?;
        let config = dir.path().join("vmagent.yml");
        std::fs::write(&config, scrape_config(sd_url, &every))
            .map_err(|e| format!("vmagent: cannot write {}: {e}", config.display()))?;
        let flags = [
            format!("-promscrape.config={}", config.display()),
            format!("-remoteWrite.url={remote_write_url}"),
            format!(
                "-remoteWrite.tmpDataPath={}",
                dir.path().join("buffer").display()
            ),
            // vmagent reads http_sd_configs on its own clock, not the config's.
            format!("-promscrape.httpSDCheckInterval={every}"),
        ];
        let mut vmagent = Self::start_with_flags(&flags, &[])?;
        vmagent._config = Some(dir);
        Ok(vmagent)
    }

    /// Starts vmagent with the caller's `flags` (scrape configuration,
    /// remote write, cluster membership: e.g. a rendered
    /// `deploy/scale/vmagent-member.flags`) and `env` (which vmagent's
    /// `%{NAME}` placeholders in its configuration files read); the kit adds
    /// only the loopback listen address, a 100 ms remote-write flush (a test
    /// waits for the data) and its log level. Waits until it answers `/health`.
    pub fn start_with_flags(flags: &[String], env: &[(String, String)]) -> Result<Self, String> {
        let binary =
            tool_path(Tool::Vmagent).ok_or("vmagent not provisioned, run `cargo xtask tools`")?;
        retry_on_port_clash(|| {
            let port = free_port();
            let dir = TempDir::new("vmagent")?;
            let mut cmd = Command::new(&binary);
            cmd.args(flags)
                .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
                .arg("-remoteWrite.flushInterval=100ms")
                .arg("-loggerLevel=INFO")
                .envs(env.iter().map(|(k, v)| (k, v)))
                .current_dir(dir.path());
            let mut server = Server::spawn("vmagent", cmd, dir)?;
            let health = format!("http://127.0.0.1:{port}/health");
            server.wait_ready("healthy on /health", || {
                matches!(http_get(&health, &[]), Ok((200, _, _)))
            })?;
            Ok(Self {
                port,
                server,
                _config: None,
            })
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The body of vmagent's Prometheus-compatible `/api/v1/targets`.
    pub fn targets_json(&self) -> Result<String, String> {
        match http_get(&format!("{}/api/v1/targets", self.url()), &[])? {
            (200, _, body) => Ok(String::from_utf8_lossy(&body).into_owned()),
            (status, _, body) => Err(format!(
                "vmagent: /api/v1/targets answered HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            )),
        }
    }

    /// The last lines of vmagent's own log (for test failure messages).
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }
}

/// One job scraping every target listed at `sd_url` every `every`.
fn scrape_config(sd_url: &str, every: &str) -> String {
    format!(
        "global:\n  scrape_interval: {every}\n  scrape_timeout: {every}\n\
         scrape_configs:\n  - job_name: gym-fleet\n    http_sd_configs:\n      - url: '{sd_url}'\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_job_from_the_sd_url() {
        let yaml = scrape_config("http://127.0.0.1:9464/sd", "500ms");
        assert!(yaml.contains("scrape_interval: 500ms"));
        assert!(yaml.contains("http_sd_configs:\n      - url: 'http://127.0.0.1:9464/sd'"));
        // vmagent parses strictly: no fields it does not know.
        assert!(!yaml.contains("refresh_interval"));
    }
}
