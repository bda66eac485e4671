//! Free loopback ports.

use std::net::{Ipv4Addr, TcpListener};

/// A free `127.0.0.1` port: bound once by the OS, then released for the caller.
///
/// Another process may take it in between; the `start` functions retry on a clash.
pub fn free_port() -> u16 {
    match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        // Binding port 0 on loopback does not fail on a working machine; a fixed
        // high port is a usable fallback that a server start will report on.
        Err(_) => 49_999,
    }
}

/// A port `base` such that `base..base + n` are all free on `127.0.0.1` right
/// now (a fleet takes consecutive ports), below 65,000.
///
/// ```
/// let base = gym_testkit::free_port_block(3);
/// assert!((base..base + 3).all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()));
/// ```
///
/// # Panics
/// No such block was found in 100 tries.
pub fn free_port_block(n: u16) -> u16 {
    for _ in 0..100 {
        let base = free_port();
        let all_free = u32::from(base) + u32::from(n) < 65_000
            && (base..base + n).all(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok());
        if all_free {
            return base;
        }
    }
    panic!("no block of {n} free consecutive ports on 127.0.0.1");
}

/// True when something accepts TCP connections on `127.0.0.1:port`.
pub(crate) fn accepts_connections(port: u16) -> bool {
    let addr = std::net::SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_port_can_be_bound() {
        let port = free_port();
        assert_ne!(port, 0);
        assert!(TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok());
    }
}
