//! The newest exemplar of each classic bucket of a histogram: what a record
//! made inside a traced span leaves, for a scrape to show beside the bucket.
//!
//! A record with an exemplar takes its bucket's slot with `try_lock`: if a
//! scrape or another thread holds it, this exemplar is left out (exemplars
//! are samples; the record itself is counted as ever), so recording never
//! waits. A record without one never touches these slots.

use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use gym_metrics_api::backend::Exemplar;

/// One exemplar as a scrape shows it.
///
/// ```
/// use gym_metrics_api::backend::Exemplar;
/// let e = Exemplar::new([1; 16], [2; 8]).unwrap();
/// let s = gym_metrics_kit::recording::ExemplarSample { exemplar: e, value: 40.0, timestamp: 1.7e9 };
/// assert_eq!(s.exemplar, e);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExemplarSample {
    /// The trace and span it came from.
    pub exemplar: Exemplar,
    /// The recorded value, in the histogram's unit.
    pub value: f64,
    /// When it was recorded, in seconds since the Unix epoch.
    pub timestamp: f64,
}

/// One slot per bucket, each holding the newest exemplar.
#[derive(Debug)]
pub struct Exemplars {
    slots: Box<[Mutex<Option<ExemplarSample>>]>,
}

impl Exemplars {
    /// Empty slots for `buckets` buckets.
    pub fn new(buckets: usize) -> Self {
        Self {
            slots: (0..buckets).map(|_| Mutex::new(None)).collect(),
        }
    }

    /// Keeps `exemplar` of `value` as bucket `bucket`'s newest, unless its
    /// slot is held right now.
    pub fn offer(&self, bucket: usize, exemplar: &Exemplar, value: f64) {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if let Some(Ok(mut slot)) = self.slots.get(bucket).map(Mutex::try_lock) {
            *slot = Some(ExemplarSample {
                exemplar: *exemplar,
                value,
                timestamp,
            });
        }
    }

    /// Each bucket's newest exemplar.
    pub fn read(&self) -> Vec<Option<ExemplarSample>> {
        let read = |slot: &Mutex<_>| *slot.lock().unwrap_or_else(PoisonError::into_inner);
        self.slots.iter().map(read).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bucket_keeps_its_newest_and_a_held_slot_is_skipped() {
        let e = |n: u8| Exemplar::new([n; 16], [n; 8]).unwrap();
        let exemplars = Exemplars::new(2);
        exemplars.offer(1, &e(1), 5.0);
        exemplars.offer(1, &e(2), 7.0);
        exemplars.offer(9, &e(3), 1.0); // no such bucket: left out
        let read = exemplars.read();
        assert_eq!(read[0], None);
        let newest = read[1].unwrap();
        assert_eq!((newest.exemplar, newest.value), (e(2), 7.0));
        assert!(newest.timestamp > 1.7e9, "{newest:?}");
        let held = exemplars.slots[0].lock().unwrap();
        exemplars.offer(0, &e(4), 1.0);
        drop(held);
        assert_eq!(exemplars.read()[0], None);
    }
}
