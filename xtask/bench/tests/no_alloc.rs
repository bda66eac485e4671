//! A record allocates nothing: a counting global allocator around many
//! records, after warm-up, for both backends' recorders. Only the recording
//! thread's allocations count: a backend's own threads (the OpenTelemetry
//! reader starting up) may allocate meanwhile without a record causing it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gym_metrics_api::backend::Recorder;

struct Counting;

thread_local! {
    /// Set on the recording thread during the counted window.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: forwards to the system allocator; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread during 100,000 rollout and verify
/// records after warm-up.
fn allocations_while_recording(recorder: &dyn Recorder) -> u64 {
    let record = |i: u64| {
        recorder.record_rollout_duration_ms((i * 7919 % 4_000_000) as f64);
        recorder.record_verify_ms((i % 60_000) as f64, i % 3 != 0);
    };
    (0..1_000).for_each(record);
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.with(|c| c.set(true));
    (0..100_000).for_each(record);
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::SeqCst)
}

// One test function: the counter is process-wide, tests must not overlap.
#[test]
fn a_record_allocates_nothing() {
    let (prom, _handle) = gym_metrics_prom::PrometheusBuilder::new().build().unwrap();
    assert_eq!(allocations_while_recording(&prom), 0, "prom recorder");

    let (otel, guard) = gym_metrics_otel::OtelBuilder::new()
        .exporter(gym_metrics_otel::MetricsExporter::Console)
        .console_writer(std::io::sink())
        .export_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    assert_eq!(allocations_while_recording(&otel), 0, "otel recorder");
    guard.shutdown().unwrap();
}
