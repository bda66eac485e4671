//! A throwaway Prometheus server on loopback.

use std::process::Command;
use std::time::Duration;

use crate::http::http_get;
use crate::port::free_port;
use crate::sample::{instant_query, raw_query, wait_for, RawSeries, Sample};
use crate::server::{retry_on_port_clash, Server};
use crate::temp_dir::TempDir;
use crate::tool::{tool_path, Tool};

/// Prometheus on `127.0.0.1:<free port>` with a temp data dir; killed by PID on drop
/// (and its temp dir removed).
///
/// Mind the first scrape: Prometheus 2.53 hands new targets to its scrape loop
/// through a discovery manager that throttles updates to one per 5 s (not
/// configurable), so the first sample lands about 5 s after `start`, whatever the
/// interval. Give [`Prometheus::wait_for`] 10 s or more; later scrapes follow `interval`.
#[derive(Debug)]
pub struct Prometheus {
    port: u16,
    server: Server,
}

impl Prometheus {
    /// Starts Prometheus scraping the given `"127.0.0.1:port"` targets (job `gym`)
    /// every `interval`, and waits until it is ready.
    pub fn start(targets: &[String], interval: Duration) -> Result<Self, String> {
        Self::start_with_config(&scrape_config(targets, interval))
    }

    /// Starts Prometheus with a complete `prometheus.yml` the caller wrote (rule
    /// files etc.). Every `{{PORT}}` in it is replaced by Prometheus's own port (so
    /// a config can scrape Prometheus itself); configs without it are used as written.
    pub fn start_with_config(config_yaml: &str) -> Result<Self, String> {
        Self::start_in_mode(config_yaml, Mode::Server, &[])
    }

    /// Like [`Prometheus::start_with_config`], with these feature flags on
    /// (`--enable-feature=native-histograms,exemplar-storage`).
    pub fn start_with_features(config_yaml: &str, features: &[&str]) -> Result<Self, String> {
        Self::start_in_mode(config_yaml, Mode::Server, features)
    }

    /// Prometheus with native histograms on (so it asks for protobuf),
    /// scraping `target` (`"127.0.0.1:port"`, job `gym`) every second and
    /// keeping each histogram's classic buckets beside its native one
    /// (`scrape_classic_histograms`).
    pub fn start_native(target: &str) -> Result<Self, String> {
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gym\n    \
             scrape_classic_histograms: true\n    static_configs:\n      - targets: ['{target}']\n"
        );
        Self::start_with_features(&config, &["native-histograms"])
    }

    /// Like [`Prometheus::start_with_config`], in agent mode
    /// (`--enable-feature=agent`): it scrapes and remote-writes, keeps no
    /// queryable storage; [`Prometheus::targets_json`] still answers.
    pub fn start_agent_with_config(config_yaml: &str) -> Result<Self, String> {
        Self::start_in_mode(config_yaml, Mode::Agent, &[])
    }

    fn start_in_mode(config_yaml: &str, mode: Mode, features: &[&str]) -> Result<Self, String> {
        let binary = tool_path(Tool::Prometheus)
            .ok_or("prometheus not provisioned, run `cargo xtask tools`")?;
        retry_on_port_clash(|| {
            let port = free_port();
            let dir = TempDir::new("prometheus")?;
            let config = dir.path().join("prometheus.yml");
            std::fs::write(&config, config_yaml.replace("{{PORT}}", &port.to_string()))
                .map_err(|e| format!("prometheus: cannot write {}: {e}", config.display()))?;
            let mut cmd = Command::new(&binary);
            cmd.arg(format!("--config.file={}", config.display()));
            let mut features = features.to_vec();
            match mode {
                Mode::Server => cmd.arg(format!(
                    "--storage.tsdb.path={}",
                    dir.path().join("data").display()
                )),
                Mode::Agent => {
                    features.push("agent");
                    cmd.arg(format!(
                        "--storage.agent.path={}",
                        dir.path().join("wal").display()
                    ))
                }
            };
            if !features.is_empty() {
                cmd.arg(format!("--enable-feature={}", features.join(",")));
            }
            cmd.arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--log.level=info")
                // Hidden flag (default 5s): how long new scrape targets wait before the first scrape.
                .arg("--scrape.discovery-reload-interval=100ms")
                .current_dir(dir.path());
            let mut server = Server::spawn("prometheus", cmd, dir)?;
            let ready_url = format!("http://127.0.0.1:{port}/-/ready");
            server.wait_ready("ready on /-/ready", || {
                matches!(http_get(&ready_url, &[]), Ok((200, _, _)))
            })?;
            Ok(Self { port, server })
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Prometheus's process id (to read its CPU time and memory).
    pub fn pid(&self) -> u32 {
        self.server.pid()
    }

    /// An instant query; a vector or scalar result.
    pub fn query(&self, promql: &str) -> Result<Vec<Sample>, String> {
        instant_query(&self.url(), promql)
    }

    /// The value of an instant query that answers exactly one series.
    pub fn value(&self, promql: &str) -> Result<f64, String> {
        match self.query(promql)?.as_slice() {
            [one] => Ok(one.value),
            other => Err(format!(
                "`{promql}` answered {} series, not one: {other:?}",
                other.len()
            )),
        }
    }

    /// A range-vector query (`metric[5m]`): every raw sample of every series.
    pub fn raw_samples(&self, promql: &str) -> Result<Vec<RawSeries>, String> {
        raw_query(&self.url(), promql)
    }

    /// Polls [`Prometheus::query`] until `pred` holds or `timeout` passes; returns the
    /// last samples, or an error showing them.
    pub fn wait_for(
        &self,
        promql: &str,
        timeout: Duration,
        pred: impl Fn(&[Sample]) -> bool,
    ) -> Result<Vec<Sample>, String> {
        wait_for(promql, timeout, pred, || self.query(promql))
    }

    /// `GET /api/v1/query_exemplars` over the last hour: the `trace_id`
    /// label of every exemplar of every series `promql` selects.
    pub fn exemplar_trace_ids(&self, promql: &str) -> Result<Vec<String>, String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let url = format!(
            "{}/api/v1/query_exemplars?query={}&start={}&end={}",
            self.url(),
            crate::http::encode_query_value(promql),
            now - 3600,
            now + 60
        );
        let (status, _, body) = http_get(&url, &[])?;
        let text = String::from_utf8_lossy(&body);
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("query_exemplars: not JSON ({e}): {text}"))?;
        if status != 200 || json["status"] != "success" {
            return Err(format!("query_exemplars `{promql}`: HTTP {status}: {text}"));
        }
        let series = json["data"]
            .as_array()
            .ok_or("query_exemplars: data is not a list")?;
        let exemplars = series
            .iter()
            .flat_map(|s| s["exemplars"].as_array().into_iter().flatten());
        Ok(exemplars
            .filter_map(|e| e["labels"]["trace_id"].as_str().map(str::to_string))
            .collect())
    }

    /// The body of `/api/v1/targets` (active and dropped targets).
    pub fn targets_json(&self) -> Result<String, String> {
        match http_get(&format!("{}/api/v1/targets", self.url()), &[])? {
            (200, _, body) => Ok(String::from_utf8_lossy(&body).into_owned()),
            (status, _, body) => Err(format!(
                "prometheus: /api/v1/targets answered HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            )),
        }
    }

    /// The last lines of Prometheus's own log (for test failure messages).
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }
}

/// A server that stores and answers queries, or an agent that only forwards.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Server,
    Agent,
}

/// A `prometheus.yml` scraping `targets` as job `gym` every `interval`
/// (for [`Prometheus::start_with_features`] where [`Prometheus::start`]
/// needs feature flags).
pub fn scrape_config(targets: &[String], interval: Duration) -> String {
    let every = format!("{}ms", interval.as_millis().max(1));
    let list = targets
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "global:\n  scrape_interval: {every}\n  scrape_timeout: {every}\n  evaluation_interval: {every}\n\
         scrape_configs:\n  - job_name: gym\n    static_configs:\n      - targets: [{list}]\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_scrape_config() {
        let yaml = scrape_config(
            &["127.0.0.1:9".into(), "127.0.0.1:10".into()],
            Duration::from_millis(200),
        );
        assert!(yaml.contains("scrape_interval: 200ms"));
        assert!(yaml.contains("job_name: gym"));
        assert!(yaml.contains("targets: ['127.0.0.1:9', '127.0.0.1:10']"));
    }
}
