//! A throwaway rotel OTLP collector on loopback, forwarding to VictoriaMetrics.

use std::process::Command;

use crate::port::{accepts_connections, free_port};
use crate::server::{retry_on_port_clash, Server};
use crate::temp_dir::TempDir;
use crate::tool::{tool_path, Tool};
use crate::victoria_metrics::VictoriaMetrics;

/// rotel OTLP collector: gRPC and HTTP receivers on free loopback ports, forwarding
/// OTLP/HTTP to a [`VictoriaMetrics`]; killed on drop.
#[derive(Debug)]
pub struct Rotel {
    grpc_port: u16,
    http_port: u16,
    server: Server,
}

impl Rotel {
    /// Starts `rotel-agent` and waits until both receiver ports accept connections.
    pub fn start(forward_to: &VictoriaMetrics) -> Result<Self, String> {
        let binary =
            tool_path(Tool::Rotel).ok_or("rotel-agent not provisioned, run `cargo xtask tools`")?;
        let exporter_endpoint = format!("{}/opentelemetry", forward_to.url());
        retry_on_port_clash(|| {
            let grpc_port = free_port();
            let http_port = free_port();
            let dir = TempDir::new("rotel")?;
            let mut cmd = Command::new(&binary);
            // Settings come from flags only; a stray ROTEL_DAEMON=true would detach it.
            for (key, _) in std::env::vars_os() {
                if key.to_string_lossy().starts_with("ROTEL_") {
                    cmd.env_remove(key);
                }
            }
            cmd.arg("start")
                .arg("--otlp-grpc-endpoint")
                .arg(format!("127.0.0.1:{grpc_port}"))
                .arg("--otlp-http-endpoint")
                .arg(format!("127.0.0.1:{http_port}"))
                .args(["--exporter", "otlp", "--otlp-exporter-protocol", "http"])
                .arg("--otlp-exporter-endpoint")
                .arg(&exporter_endpoint)
                .arg("--pid-file")
                .arg(dir.path().join("rotel-agent.pid"))
                .arg("--log-file")
                .arg(dir.path().join("rotel-agent.daemon.log"))
                .current_dir(dir.path());
            let mut server = Server::spawn("rotel-agent", cmd, dir)?;
            server.wait_ready("accepting on its gRPC and HTTP ports", || {
                accepts_connections(grpc_port) && accepts_connections(http_port)
            })?;
            Ok(Self {
                grpc_port,
                http_port,
                server,
            })
        })
    }

    /// `http://127.0.0.1:PORT`: the OTLP/gRPC receiver.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc_port)
    }

    /// `http://127.0.0.1:PORT`: the OTLP/HTTP receiver (metrics at `/v1/metrics`).
    pub fn http_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }

    /// The last lines of rotel's own log (for test failure messages).
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }
}
