//! The start-up warning for an endpoint reachable from other hosts without a
//! web configuration that authenticates clients: anyone who reaches the port
//! can read the metrics and spend the process's time and descriptors.

use std::net::SocketAddr;

/// The warning to log once at start-up for an endpoint bound to `addr`, or
/// `None` when only this host can reach it (a loopback address).
pub(crate) fn unprotected_exposure_warning(addr: SocketAddr) -> Option<String> {
    if addr.ip().is_loopback() {
        return None;
    }
    Some(format!(
        "the metrics endpoint listens on {addr}, which other hosts can reach, with no TLS and no \
         authentication: anyone who reaches it can read every metric and hold its connections; \
         serve it with TLS and basic auth (GYM_METRICS_WEB_CONFIG_FILE), or listen on 127.0.0.1 \
         (OTEL_EXPORTER_PROMETHEUS_HOST) unless a firewall or an authenticating proxy stands in \
         front of it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_quiet_every_other_address_warns_naming_itself() {
        for quiet in ["127.0.0.1:9464", "127.3.2.1:1", "[::1]:9464"] {
            let addr: SocketAddr = quiet.parse().unwrap();
            assert_eq!(unprotected_exposure_warning(addr), None, "{quiet}");
        }
        for exposed in [
            "0.0.0.0:9464",
            "[::]:9464",
            "10.1.2.3:9100",
            "[2001:db8::1]:80",
        ] {
            let addr: SocketAddr = exposed.parse().unwrap();
            let warning = unprotected_exposure_warning(addr).expect(exposed);
            assert!(warning.contains(&addr.to_string()), "{warning}");
            assert!(
                warning.contains("no TLS and no authentication"),
                "{warning}"
            );
        }
    }
}
