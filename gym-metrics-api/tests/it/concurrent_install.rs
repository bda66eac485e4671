//! Scenario: many threads install at once; exactly one wins.

use std::sync::{Arc, Barrier};

use crate::common::CountingRecorder;
use gym_metrics_api::{install, Role};

#[test]
fn exactly_one_winner() {
    if gym_testkit::ran_in_child() {
        return;
    }
    const THREADS: usize = 16;
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let recorder = CountingRecorder::new(Role::server(format!("s-{i}"), "resources"));
                barrier.wait();
                install(recorder)
                    .map(|inst| inst.role().name().to_string())
                    .map_err(|rejected| rejected.into_inner().role)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    assert_eq!(gym_metrics_api::role().unwrap().name(), winners[0].as_str());
}
