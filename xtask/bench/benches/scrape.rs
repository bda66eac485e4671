//! Scrape: the render cost of our exposition beside `prometheus`'s
//! `TextEncoder` and `prometheus-client`'s encoder for the same families,
//! and the record cost while a scraper renders continuously (with every
//! scrape checked: `_count` equals the `+Inf` bucket).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use gym_bench::harness::{best_and_median, timed_loop};
use gym_bench::scrape_families::{
    prometheus_client_registry, prometheus_registry, target_info_labels, Recordings,
};
use gym_bench::{harness, measure, Candidate, Mode, Output};
use gym_metrics_api::Recorder;
use gym_metrics_prom::PrometheusBuilder;
use serde_json::json;

fn main() {
    let mode = Mode::current();
    let mut out = Output::new("scrape");
    render_cost(mode, &mut out);
    record_while_scraping(mode, &mut out);
    out.write().unwrap();
}

fn render_cost(mode: Mode, out: &mut Output) {
    let recordings = Recordings::spread(10_000);
    let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
    for &ms in &recordings.rollouts {
        recorder.record_rollout_duration(ms);
    }
    for &(ms, ok) in &recordings.verifications {
        recorder.record_verify(ms, ok);
    }
    let ours = handle.render();
    let labels = target_info_labels(&ours);
    assert!(!labels.is_empty(), "{ours}");
    let prometheus = prometheus_registry(&recordings, &labels).unwrap();
    let client = prometheus_client_registry(&recordings, &labels);
    let render_prometheus = || {
        let mut text = String::new();
        prometheus::TextEncoder::new()
            .encode_utf8(&prometheus.gather(), &mut text)
            .unwrap();
        text
    };
    let render_client = || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &client).unwrap();
        text
    };
    let sizes = json!({
        "gym-metrics-prom": ours.len(),
        "prometheus": render_prometheus().len(),
        "prometheus-client": render_client().len(),
    });
    let candidates = [
        Candidate::new("gym-metrics-prom PrometheusHandle::render", |_| {
            black_box(handle.render());
        }),
        Candidate::new("prometheus 0.14 gather + TextEncoder", |_| {
            black_box(render_prometheus());
        }),
        Candidate::new("prometheus-client 0.26 text::encode", |_| {
            black_box(render_client());
        }),
    ];
    let (rounds, per_run) = match mode {
        Mode::Timing => (60, 200),
        Mode::Quick => (1, 2),
    };
    let figures = measure(1, rounds, per_run, &candidates);
    harness::print("render, ns per exposition", &figures);
    out.set(
        "render",
        figures
            .iter()
            .map(|f| f.to_json())
            .collect::<Vec<_>>()
            .into(),
    );
    out.set("render_bytes", sizes);
}

/// `_count` equals the `+Inf` bucket for every histogram of `text`.
fn consistent(text: &str) -> bool {
    let value = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .map(str::to_string)
    };
    [
        "gym_rollout_duration_ms_milliseconds",
        "gym_verify_duration_ms_milliseconds",
    ]
    .iter()
    .all(|name| {
        let count = value(&format!("{name}_count{{"));
        let inf = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}_bucket{{")) && l.contains("le=\"+Inf\""))
            .and_then(|l| l.rsplit(' ').next())
            .map(str::to_string);
        count == inf
    })
}

fn record_while_scraping(mode: Mode, out: &mut Output) {
    let (recorder, handle) = PrometheusBuilder::new().build().unwrap();
    recorder.record_verify(1.0, true);
    let active = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let scrapes = AtomicU64::new(0);
    let inconsistent = AtomicU64::new(0);
    let rollout = |v: u64| recorder.record_rollout_duration(v as f64);
    let (idle, scraping, scraping_runs) = std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if !active.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_micros(50));
                    continue;
                }
                let text = handle.render();
                if !consistent(&text) {
                    inconsistent.fetch_add(1, Ordering::Relaxed);
                }
                scrapes.fetch_add(1, Ordering::Relaxed);
            }
        });
        let mut idle = Vec::new();
        let mut scraping = Vec::new();
        timed_loop(1_000, &rollout);
        for _ in 0..mode.rounds() {
            idle.push(timed_loop(mode.long_run(), &rollout));
            active.store(true, Ordering::Relaxed);
            let seen = scrapes.load(Ordering::Relaxed);
            while scrapes.load(Ordering::Relaxed) == seen {
                std::hint::spin_loop();
            }
            let before = scrapes.load(Ordering::Relaxed);
            let ns = timed_loop(mode.long_run(), &rollout);
            // Only a run during which a scrape completed saw a scraper at work
            // (on a loaded machine the scraper may have been descheduled).
            if scrapes.load(Ordering::Relaxed) > before {
                scraping.push(ns);
            }
            active.store(false, Ordering::Relaxed);
        }
        stop.store(true, Ordering::Relaxed);
        let kept = scraping.len();
        (best_and_median(&idle), best_and_median(&scraping), kept)
    });
    let scrapes = scrapes.load(Ordering::Relaxed);
    let inconsistent = inconsistent.load(Ordering::Relaxed);
    println!(
        "record while scraping: idle best {:.2} / median {:.2} ns, scraping best {:.2} / median {:.2} ns; {scrapes} scrapes, {inconsistent} inconsistent",
        idle.0, idle.1, scraping.0, scraping.1
    );
    assert_eq!(inconsistent, 0, "a scrape had _count != +Inf bucket");
    assert!(consistent(&handle.render()));
    out.set(
        "record_while_scraping",
        json!({
            "idle_best_ns": idle.0, "idle_median_ns": idle.1,
            "scraping_best_ns": scraping.0, "scraping_median_ns": scraping.1,
            "scrapes": scrapes, "inconsistent_scrapes": inconsistent,
            "scraping_runs_kept": scraping_runs, "runs": mode.rounds(),
        }),
    );
}
