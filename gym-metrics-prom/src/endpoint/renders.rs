//! The rendered expositions the endpoint's answers hold, shared when they
//! would take too much: each answer's body is one render (an `Arc`, sent by
//! hyper without a copy), and a client that never reads its answer keeps
//! that render alive until the write timeout closes it. While the renders
//! held take less than [`HELD_BYTES_BUDGET`], every scrape is rendered
//! afresh, so it holds everything recorded before it was asked for; past
//! it, a scrape gets the newest render of its format and encoding, already
//! held by another answer (counted in `EndpointStats::shared_answers`), so
//! N slow readers hold one copy, not N. A scrape that may be the final one
//! at shutdown is always rendered afresh.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use bytes::Bytes;

/// The bytes the renders held by answers may take before scrapes share the
/// newest one: 8 MiB, beside which an ordinary exposition (tens of kB) is
/// rendered afresh for hundreds of slow readers at once.
pub(crate) const HELD_BYTES_BUDGET: usize = 8 << 20;

/// The variants of a render: text, OpenMetrics or protobuf, plain or gzip.
pub(crate) const VARIANTS: usize = 6;

/// One render, its bytes counted as held for as long as an answer holds it.
struct Rendered {
    bytes: Vec<u8>,
    gzipped: bool,
    held: Arc<AtomicUsize>,
}

impl Drop for Rendered {
    fn drop(&mut self) {
        self.held
            .fetch_sub(self.bytes.capacity(), Ordering::Relaxed);
    }
}

/// A render as a body.
struct Body(Arc<Rendered>);

impl AsRef<[u8]> for Body {
    fn as_ref(&self) -> &[u8] {
        &self.0.bytes
    }
}

/// A body and what it is.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) body: Bytes,
    pub(crate) gzipped: bool,
}

/// The renders held by this endpoint's answers.
pub(crate) struct Renders {
    budget: usize,
    held: Arc<AtomicUsize>,
    newest: Mutex<[Weak<Rendered>; VARIANTS]>,
    shared: AtomicU64,
}

impl fmt::Debug for Renders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Renders")
            .field("budget", &self.budget)
            .field("held", &self.held.load(Ordering::Relaxed))
            .field("shared", &self.shared())
            .finish()
    }
}

impl Default for Renders {
    fn default() -> Self {
        Self::new(HELD_BYTES_BUDGET)
    }
}

impl Renders {
    /// Nothing held yet; scrapes share past `budget` bytes held.
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            budget,
            held: Arc::default(),
            newest: Mutex::default(),
            shared: AtomicU64::new(0),
        }
    }

    /// The body of variant `at`: made by `render` (its bytes, and whether
    /// they are gzipped), unless the renders held are over the budget and
    /// `fresh` is not asked for: then the newest render of the variant
    /// still held, if any.
    pub(crate) fn answer(
        &self,
        at: usize,
        fresh: bool,
        render: impl FnOnce() -> (Vec<u8>, bool),
    ) -> Answer {
        let lock = || self.newest.lock().unwrap_or_else(PoisonError::into_inner);
        if !fresh && self.held.load(Ordering::Relaxed) >= self.budget {
            if let Some(newest) = lock().get(at).and_then(Weak::upgrade) {
                self.shared.fetch_add(1, Ordering::Relaxed);
                let gzipped = newest.gzipped;
                return Answer {
                    body: Bytes::from_owner(Body(newest)),
                    gzipped,
                };
            }
        }
        let (bytes, gzipped) = render();
        self.held.fetch_add(bytes.capacity(), Ordering::Relaxed);
        let rendered = Arc::new(Rendered {
            bytes,
            gzipped,
            held: Arc::clone(&self.held),
        });
        if let Some(newest) = lock().get_mut(at) {
            *newest = Arc::downgrade(&rendered);
        }
        Answer {
            body: Bytes::from_owner(Body(rendered)),
            gzipped,
        }
    }

    /// Scrapes answered with a render another answer held.
    pub(crate) fn shared(&self) -> u64 {
        self.shared.load(Ordering::Relaxed)
    }

    /// The bytes held by answers now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> impl FnOnce() -> (Vec<u8>, bool) + '_ {
        move || (text.as_bytes().to_vec(), false)
    }

    #[test]
    fn fresh_under_the_budget_shared_past_it_and_released_when_answers_end() {
        let renders = Renders::new(10);
        let a = renders.answer(0, false, render("first"));
        let b = renders.answer(0, false, render("second"));
        assert_eq!((&a.body[..], &b.body[..]), (&b"first"[..], &b"second"[..]));
        // 11 bytes held: the next shares the newest.
        let c = renders.answer(0, false, render("third"));
        assert_eq!(&c.body[..], b"second");
        assert_eq!(renders.shared(), 1);
        // Unless fresh is asked for (a final scrape), or for another variant.
        assert_eq!(&renders.answer(0, true, render("final")).body[..], b"final");
        assert_eq!(
            &renders.answer(1, false, render("other")).body[..],
            b"other"
        );
        drop((a, b, c));
        assert_eq!(renders.held(), 0);
        assert_eq!(
            &renders.answer(0, false, render("again")).body[..],
            b"again"
        );
    }
}
