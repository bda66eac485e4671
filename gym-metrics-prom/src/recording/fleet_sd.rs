//! The orchestrator's published fleet, as the `GET /sd` body: rendered once
//! per publish, handed out (a reference count) on every request.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use gym_metrics_api::FleetTarget;

/// The last published target list as service-discovery JSON; `[]` until the
/// first publish.
#[derive(Debug)]
pub(crate) struct FleetSd {
    document: Mutex<Bytes>,
}

impl FleetSd {
    pub(crate) fn new() -> Self {
        Self {
            document: Mutex::new(Bytes::from_static(b"[]")),
        }
    }

    /// Replaces the list. Rendering happens here, outside the lock, so a
    /// request waits at most for a pointer swap.
    pub(crate) fn publish(&self, targets: &[FleetTarget]) {
        let document = Bytes::from(FleetTarget::sd_json(targets));
        // A panic elsewhere while holding the lock cannot corrupt a Bytes.
        *self.document.lock().unwrap_or_else(PoisonError::into_inner) = document;
    }

    /// The current document (cheap: shares the bytes).
    pub(crate) fn document(&self) -> Bytes {
        self.document
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Shared between the recorder (which publishes) and the handle (which serves).
pub(crate) type SharedFleetSd = Option<Arc<FleetSd>>;

#[cfg(test)]
mod tests {
    use super::*;
    use gym_metrics_api::Role;

    #[test]
    fn empty_until_published_then_the_whole_last_list() {
        let sd = FleetSd::new();
        assert_eq!(&sd.document()[..], b"[]");
        let a = FleetTarget::of_process("127.0.0.1:1", &Role::orchestrator(), None).unwrap();
        let b =
            FleetTarget::of_process("127.0.0.1:2", &Role::server("s-0", "agent"), None).unwrap();
        sd.publish(&[a.clone(), b]);
        sd.publish(std::slice::from_ref(&a));
        assert_eq!(sd.document(), FleetTarget::sd_json(&[a]).into_bytes());
        sd.publish(&[]);
        assert_eq!(&sd.document()[..], b"[]");
    }
}
