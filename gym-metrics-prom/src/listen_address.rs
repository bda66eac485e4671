//! Where the endpoint listens: a host and port (resolved at start-up) or an
//! explicit socket address.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

use crate::error::BuildError;

/// The default listen host, as OpenTelemetry's Prometheus exporter specifies.
pub(crate) const DEFAULT_HOST: &str = "localhost";
/// The default listen port, as OpenTelemetry's Prometheus exporter specifies.
pub(crate) const DEFAULT_PORT: u16 = 9464;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ListenAddress {
    HostPort { host: String, port: u16 },
    Socket(SocketAddr),
}

impl Default for ListenAddress {
    fn default() -> Self {
        ListenAddress::HostPort {
            host: DEFAULT_HOST.to_string(),
            port: DEFAULT_PORT,
        }
    }
}

impl ListenAddress {
    /// Binds the first resolved address that accepts; the error names the
    /// last address tried.
    pub(crate) fn bind(&self) -> Result<TcpListener, BuildError> {
        let candidates: Vec<SocketAddr> = match self {
            ListenAddress::Socket(addr) => vec![*addr],
            ListenAddress::HostPort { host, port } => {
                let resolved =
                    (host.as_str(), *port)
                        .to_socket_addrs()
                        .map_err(|e| BuildError::Resolve {
                            host: host.clone(),
                            port: *port,
                            reason: e.to_string(),
                        })?;
                // Prefer IPv4: `localhost` then means 127.0.0.1, which every scraper reaches.
                let (mut v4, v6): (Vec<_>, Vec<_>) = resolved.partition(SocketAddr::is_ipv4);
                v4.extend(v6);
                v4
            }
        };
        let mut last_error = None;
        for addr in candidates {
            match TcpListener::bind(addr) {
                Ok(listener) => return Ok(listener),
                Err(source) => last_error = Some(BuildError::Bind { addr, source }),
            }
        }
        Err(last_error.unwrap_or_else(|| match self {
            ListenAddress::HostPort { host, port } => BuildError::Resolve {
                host: host.clone(),
                port: *port,
                reason: "no address found".into(),
            },
            // A socket address always yields one candidate.
            ListenAddress::Socket(addr) => BuildError::Resolve {
                host: addr.ip().to_string(),
                port: addr.port(),
                reason: "no address found".into(),
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_port_zero_binds_loopback_v4() {
        let l = ListenAddress::HostPort {
            host: "localhost".into(),
            port: 0,
        }
        .bind()
        .unwrap();
        let addr = l.local_addr().unwrap();
        assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    }

    #[test]
    fn a_port_in_use_is_an_error_naming_the_address() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = ListenAddress::Socket(addr).bind().unwrap_err();
        assert!(matches!(e, BuildError::Bind { .. }));
        assert!(e.to_string().contains(&addr.to_string()), "{e}");
    }

    #[test]
    fn an_unresolvable_host_is_an_error_naming_it() {
        let e = ListenAddress::HostPort {
            host: "no such host.invalid".into(),
            port: 1,
        }
        .bind()
        .unwrap_err();
        assert!(e.to_string().contains("no such host.invalid"), "{e}");
    }
}
