//! The orchestrator's published fleet, as the `GET /sd` body: rendered once
//! per publish, handed out (a reference count) on every request.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use gym_metrics_api::FleetTarget;

/// The last published target list as service-discovery JSON; `[]` until the
/// first publish.
///
/// ```
/// use gym_metrics_api::{FleetTarget, Role};
/// let sd = gym_metrics_kit::recording::FleetSd::new();
/// assert_eq!(&sd.document()[..], b"[]");
/// let me = FleetTarget::of_process("127.0.0.1:9464", &Role::orchestrator(), None).unwrap();
/// sd.publish(std::slice::from_ref(&me));
/// assert_eq!(sd.document(), FleetTarget::sd_json(&[me]).into_bytes());
/// ```
#[derive(Debug)]
pub struct FleetSd {
    document: Mutex<Bytes>,
}

impl FleetSd {
    /// A fleet published as `[]`, until the first [`FleetSd::publish`].
    ///
    /// ```
    /// assert_eq!(&gym_metrics_kit::recording::FleetSd::new().document()[..], b"[]");
    /// ```
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self {
            document: Mutex::new(Bytes::from_static(b"[]")),
        }
    }

    /// Replaces the list. Rendering happens here, outside the lock, so a
    /// request waits at most for a pointer swap.
    ///
    /// ```
    /// let sd = gym_metrics_kit::recording::FleetSd::new();
    /// sd.publish(&[]);
    /// assert_eq!(&sd.document()[..], b"[]");
    /// ```
    pub fn publish(&self, targets: &[FleetTarget]) {
        let document = Bytes::from(FleetTarget::sd_json(targets));
        // A panic elsewhere while holding the lock cannot corrupt a Bytes.
        *self.document.lock().unwrap_or_else(PoisonError::into_inner) = document;
    }

    /// The current document (cheap: shares the bytes).
    ///
    /// ```
    /// let sd = gym_metrics_kit::recording::FleetSd::new();
    /// assert_eq!(sd.document(), sd.document());
    /// ```
    pub fn document(&self) -> Bytes {
        self.document
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Shared between the recorder (which publishes) and the handle (which
/// serves); `None` for a role that publishes no fleet.
///
/// ```
/// let sd: gym_metrics_kit::recording::SharedFleetSd = None; // a server's
/// assert!(sd.is_none());
/// ```
pub type SharedFleetSd = Option<Arc<FleetSd>>;

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
