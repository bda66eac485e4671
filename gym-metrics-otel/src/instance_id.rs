//! `service.instance.id`: unique per process.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

/// A random version-4 UUID string, drawn from the standard library's
/// randomly seeded hasher mixed with the process id and the clock.
pub(crate) fn new_instance_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut first = RandomState::new().build_hasher();
    first.write_u32(std::process::id());
    first.write_u128(nanos);
    let high = first.finish();
    let mut second = RandomState::new().build_hasher();
    second.write_u64(high);
    let low = second.finish();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0x0fff,
        ((low >> 48) & 0x3fff) | 0x8000,
        low & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ_and_look_like_uuids() {
        let a = new_instance_id();
        let b = new_instance_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert_eq!(a.split('-').count(), 5);
    }
}
