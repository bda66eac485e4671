//! Free loopback ports.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::Mutex;

/// Every port this process has handed out: tests of one binary run at
/// once, and a port handed to one (free until its server binds it) must not
/// be handed to another, nor fall in another's block.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

fn handed_out() -> std::sync::MutexGuard<'static, BTreeSet<u16>> {
    HANDED_OUT.lock().unwrap_or_else(|p| p.into_inner())
}

/// A free `127.0.0.1` port: bound once by the OS, then released for the
/// caller, and never handed out twice in this process.
///
/// Another process may take it in between; the `start` functions retry on a clash.
pub fn free_port() -> u16 {
    for _ in 0..100 {
        let Ok(port) = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
        else {
            break;
        };
        if handed_out().insert(port) {
            return port;
        }
    }
    // Binding port 0 on loopback does not fail on a working machine; a fixed
    // high port is a usable fallback that a server start will report on.
    49_999
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
        if u32::from(base) + u32::from(n) >= 65_000 {
            continue;
        }
        let mut taken = handed_out();
        // The base itself was just handed out, to this block.
        let all_free = (base + 1..base + n).all(|p| !taken.contains(&p))
            && (base..base + n).all(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok());
        if all_free {
            taken.extend(base..base + n);
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

    // One test: a probe of another test's `free_port` may hold a port for a
    // moment, so binding one here while another test probes would race.
    #[test]
    fn a_free_port_can_be_bound_and_none_is_handed_out_twice_nor_inside_a_block() {
        let port = free_port();
        assert_ne!(port, 0);
        assert!(TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok());
        let base = free_port_block(8);
        let block: BTreeSet<u16> = (base..base + 8).collect();
        let mut seen = BTreeSet::from([port]);
        for _ in 0..200 {
            let p = free_port();
            assert!(
                !block.contains(&p),
                "{p} is in the block {base}..{}",
                base + 8
            );
            assert!(seen.insert(p), "{p} handed out twice");
        }
    }
}
