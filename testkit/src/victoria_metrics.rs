//! A throwaway VictoriaMetrics single-node server on loopback.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::http::http_get;
use crate::port::free_port;
use crate::sample::{instant_query, instant_query_with, wait_for, Sample};
use crate::server::{retry_on_port_clash, Server};
use crate::temp_dir::TempDir;
use crate::tool::{tool_path, Tool};

/// VictoriaMetrics single-node on `127.0.0.1`, with OTLP metric names in Prometheus
/// style (`-opentelemetry.usePrometheusNaming`) and fresh samples queryable at once
/// (`-search.latencyOffset=1ms`, `-search.disableCache`, and a flush before each
/// query); temp storage dir; killed on drop.
#[derive(Debug)]
pub struct VictoriaMetrics {
    port: u16,
    /// The https listener of [`VictoriaMetrics::start_tls`].
    tls_port: Option<u16>,
    server: Server,
}

impl VictoriaMetrics {
    /// Starts VictoriaMetrics and waits until `/health` answers.
    pub fn start() -> Result<Self, String> {
        Self::start_with(None, &[])
    }

    /// As [`VictoriaMetrics::start`], with more command-line flags (e.g.
    /// `-relabelConfig=FILE`, which relabels everything ingested, OTLP too).
    pub fn start_with_flags(flags: &[String]) -> Result<Self, String> {
        Self::start_with(None, flags)
    }

    /// As [`VictoriaMetrics::start`], with a second listener serving https
    /// (`-tls -tlsCertFile -tlsKeyFile`) with the given PEM certificate and
    /// key, for [`VictoriaMetrics::otlp_https_metrics_endpoint`]; the first
    /// stays plain http for queries.
    pub fn start_tls(certificate: &Path, key: &Path) -> Result<Self, String> {
        Self::start_with(Some((certificate, key)), &[])
    }

    fn start_with(tls: Option<(&Path, &Path)>, flags: &[String]) -> Result<Self, String> {
        let binary = tool_path(Tool::VictoriaMetrics)
            .ok_or("victoria-metrics not provisioned, run `cargo xtask tools`")?;
        retry_on_port_clash(|| {
            let port = free_port();
            let dir = TempDir::new("victoria-metrics")?;
            let mut cmd = Command::new(&binary);
            let tls_port = tls.map(|(certificate, key)| {
                let tls_port = free_port();
                // Array flags, one value per listener: plain, then https.
                cmd.arg(format!(
                    "-httpListenAddr=127.0.0.1:{port},127.0.0.1:{tls_port}"
                ))
                .arg("-tls=false,true")
                .arg(format!("-tlsCertFile=,{}", certificate.display()))
                .arg(format!("-tlsKeyFile=,{}", key.display()));
                tls_port
            });
            if tls_port.is_none() {
                cmd.arg(format!("-httpListenAddr=127.0.0.1:{port}"));
            }
            cmd.arg(format!(
                "-storageDataPath={}",
                dir.path().join("data").display()
            ))
            .arg("-opentelemetry.usePrometheusNaming")
            .arg("-search.latencyOffset=1ms")
            .arg("-search.disableCache")
            .arg("-retentionPeriod=100y")
            .args(flags)
            .current_dir(dir.path());
            let mut server = Server::spawn("victoria-metrics", cmd, dir)?;
            let health = format!("http://127.0.0.1:{port}/health");
            server.wait_ready("healthy on /health", || {
                matches!(http_get(&health, &[]), Ok((200, _, _)))
            })?;
            if let Some(tls_port) = tls_port {
                server.wait_ready("accepting on its https port", || {
                    crate::port::accepts_connections(tls_port)
                })?;
            }
            Ok(Self {
                port,
                tls_port,
                server,
            })
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT/opentelemetry/v1/metrics`: where OTLP/HTTP metrics go.
    pub fn otlp_http_metrics_endpoint(&self) -> String {
        format!("{}/opentelemetry/v1/metrics", self.url())
    }

    /// `https://127.0.0.1:PORT/opentelemetry/v1/metrics` on the https
    /// listener of [`VictoriaMetrics::start_tls`] (`None` without one).
    pub fn otlp_https_metrics_endpoint(&self) -> Option<String> {
        self.tls_port
            .map(|p| format!("https://127.0.0.1:{p}/opentelemetry/v1/metrics"))
    }

    /// An instant query (vector or scalar result), after asking VictoriaMetrics to
    /// make every ingested sample searchable (`/internal/force_flush`).
    pub fn query(&self, promql: &str) -> Result<Vec<Sample>, String> {
        self.flush()?;
        instant_query(&self.url(), promql)
    }

    /// As [`VictoriaMetrics::query`], with VictoriaMetrics' `extra_label`
    /// (`name=value`): every series selector of `promql` gets that matcher,
    /// so a query over a whole fleet is answered for one process alone.
    pub fn query_with_extra_label(
        &self,
        promql: &str,
        extra_label: &str,
    ) -> Result<Vec<Sample>, String> {
        self.flush()?;
        instant_query_with(&self.url(), promql, &[("extra_label", extra_label)])
    }

    fn flush(&self) -> Result<(), String> {
        let flush = format!("{}/internal/force_flush", self.url());
        match http_get(&flush, &[]) {
            Ok((200, _, _)) => {}
            Ok((status, _, body)) => {
                return Err(format!(
                    "victoria-metrics: force_flush answered HTTP {status}: {}",
                    String::from_utf8_lossy(&body)
                ))
            }
            Err(e) => return Err(format!("victoria-metrics: force_flush failed: {e}")),
        }
        Ok(())
    }

    /// Polls [`VictoriaMetrics::query`] until `pred` holds or `timeout` passes;
    /// returns the last samples, or an error showing them.
    pub fn wait_for(
        &self,
        promql: &str,
        timeout: Duration,
        pred: impl Fn(&[Sample]) -> bool,
    ) -> Result<Vec<Sample>, String> {
        wait_for(promql, timeout, pred, || self.query(promql))
    }

    /// The last lines of VictoriaMetrics's own log (for test failure messages).
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }
}
