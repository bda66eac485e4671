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
/// now (a fleet takes consecutive ports), chosen below the kernel's
/// ephemeral range (`net.ipv4.ip_local_port_range`) where there is room:
/// a port in that range may be handed by the kernel to any port-0 listener
/// (a resources server's `/verify`) or outgoing connection before the
/// fleet's later children bind it, which once crashed one agent of a
/// 201-process fleet with "Address already in use".
///
/// ```
/// let base = gym_testkit::free_port_block(3);
/// assert!((base..base + 3).all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()));
/// ```
///
/// # Panics
/// No such block was found in 200 tries.
pub fn free_port_block(n: u16) -> u16 {
    let (low, _) = ephemeral_range();
    let room = low.saturating_sub(BELOW_EPHEMERAL_FROM).saturating_sub(n);
    let mut seed = seed();
    for attempt in 0..200 {
        // `from_free_port`: the base was just handed out, to this block.
        let (base, from_free_port) = if room > 0 && attempt < 100 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let offset = u16::try_from((seed >> 33) % u64::from(room)).unwrap_or(0);
            (BELOW_EPHEMERAL_FROM + offset, false)
        } else {
            // No room below the range (or none found there): any free port.
            (free_port(), true)
        };
        if u32::from(base) + u32::from(n) >= 65_000 {
            continue;
        }
        let mut taken = handed_out();
        let all_free = (base..base + n)
            .all(|p| (p == base && from_free_port) || !taken.contains(&p))
            && (base..base + n).all(|p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok());
        if all_free {
            taken.extend(base..base + n);
            return base;
        }
    }
    panic!("no block of {n} free consecutive ports on 127.0.0.1");
}

/// The lowest port a block starts at: above the well-known and most
/// registered services' ports.
const BELOW_EPHEMERAL_FROM: u16 = 20_000;

/// `net.ipv4.ip_local_port_range`; Linux's default when unreadable.
fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut parts = text.split_whitespace().map(|p| p.parse::<u16>().ok());
            Some((parts.next()??, parts.next()??))
        })
        .unwrap_or((32_768, 60_999))
}

/// A seed that differs between processes and calls (test binaries run at once).
fn seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32)
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
        let (low, _) = ephemeral_range();
        // Where the range leaves room below it (Linux's default does).
        assert!(
            low < BELOW_EPHEMERAL_FROM + 8 || base + 8 <= low,
            "block {base}..{} reaches the ephemeral range from {low}",
            base + 8
        );
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
