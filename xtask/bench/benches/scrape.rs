//! Scrape: the render cost of our exposition (text 0.0.4, OpenMetrics and
//! protobuf) beside `prometheus`'s `TextEncoder` and `prometheus-client`'s
//! encoder for the same families, and the record cost while a scraper
//! renders continuously (with every scrape checked: `_count` equals the
//! `+Inf` bucket).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use criterion::Criterion;
use gym_bench::scrape_families::{
    prometheus_client_registry, prometheus_registry, rollout_records, target_info_labels,
    FamilyNames, Recordings,
};
use gym_bench::{harness, Figure, Mode, Output, Table};
use gym_metrics_api::backend::Recorder;
use gym_metrics_prom::PrometheusBuilder;
use serde_json::json;

fn main() {
    let mode = Mode::current();
    let mut c = harness::criterion();
    let mut out = Output::new("scrape");
    render_cost(mode, &mut c, &mut out);
    record_while_scraping(mode, &mut c, &mut out);
    c.final_summary();
    out.write().expect("writing the scrape figures");
}

fn render_cost(mode: Mode, c: &mut Criterion, out: &mut Output) {
    let recordings = Recordings::spread(10_000);
    let (recorder, handle) = PrometheusBuilder::new()
        .build()
        .expect("building the prom recorder");
    for &ms in &recordings.rollouts {
        recorder.record_rollout_duration_ms(ms);
    }
    for &(ms, ok) in &recordings.verifications {
        recorder.record_verify_ms(ms, ok);
    }
    let ours = handle.render();
    let labels = target_info_labels(&ours);
    assert!(!labels.is_empty(), "{ours}");
    let names = FamilyNames::read(&ours).expect("our exposition names every family");
    let prometheus = prometheus_registry(&recordings, &names, &labels)
        .expect("building the prometheus registry");
    let client = prometheus_client_registry(&recordings, &names, &labels);
    let render_prometheus = || {
        let mut text = String::new();
        prometheus::TextEncoder::new()
            .encode_utf8(&prometheus.gather(), &mut text)
            .expect("prometheus encodes its families");
        text
    };
    let render_client = || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &client)
            .expect("prometheus-client encodes its registry");
        text
    };
    let sizes = json!({
        "gym-metrics-prom": ours.len(),
        "gym-metrics-prom OpenMetrics": handle.render_openmetrics().len(),
        "gym-metrics-prom protobuf": handle.render_protobuf().len(),
        "prometheus": render_prometheus().len(),
        "prometheus-client": render_client().len(),
    });
    let mut t = Table::new(c, "scrape render", 1);
    t.run_with("gym-metrics-prom PrometheusHandle::render", |b| {
        b.iter(|| handle.render())
    });
    t.run_with("gym-metrics-prom render_openmetrics", |b| {
        b.iter(|| handle.render_openmetrics())
    });
    t.run_with(
        "gym-metrics-prom render_protobuf (classic and native)",
        |b| b.iter(|| handle.render_protobuf()),
    );
    t.run_with("prometheus 0.14 gather + TextEncoder", |b| {
        b.iter(render_prometheus)
    });
    t.run_with("prometheus-client 0.26 text::encode", |b| {
        b.iter(render_client)
    });
    out.set("render", t.finish(mode));
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

fn record_while_scraping(mode: Mode, c: &mut Criterion, out: &mut Output) {
    const GROUP: &str = "scrape record_while_scraping";
    const IDLE: &str = "idle";
    const SCRAPING: &str = "while scraping";
    let (recorder, handle) = PrometheusBuilder::new()
        .build()
        .expect("building the prom recorder");
    recorder.record_verify_ms(1.0, true);
    let active = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let scrapes = AtomicU64::new(0);
    let inconsistent = AtomicU64::new(0);
    let mut records = 1_000u64;
    let scrapes_while_timed = std::thread::scope(|s| {
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
        for i in 0..records {
            recorder.record_rollout_duration_ms(harness::value(i) as f64);
        }
        let mut t = Table::new(c, GROUP, 1);
        records += t.run(IDLE, |v| recorder.record_rollout_duration_ms(v as f64));
        // The scraper renders back to back for the whole of the second
        // benchmark (warm-up, samples and criterion's analysis alike), and
        // has completed a scrape before it starts.
        active.store(true, Ordering::Relaxed);
        let seen = scrapes.load(Ordering::Relaxed);
        while scrapes.load(Ordering::Relaxed) == seen {
            std::hint::spin_loop();
        }
        let before = scrapes.load(Ordering::Relaxed);
        records += t.run(SCRAPING, |v| recorder.record_rollout_duration_ms(v as f64));
        let during = scrapes.load(Ordering::Relaxed) - before;
        active.store(false, Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        out.set("record_while_scraping_rows", t.finish(mode));
        during
    });
    let scrapes = scrapes.load(Ordering::Relaxed);
    let inconsistent = inconsistent.load(Ordering::Relaxed);
    let idle = Figure::read(mode, GROUP, IDLE, 1).estimate;
    let scraping = Figure::read(mode, GROUP, SCRAPING, 1).estimate;
    println!(
        "record while scraping: {scrapes} scrapes ({scrapes_while_timed} during the scraping benchmark), {inconsistent} inconsistent"
    );
    assert_eq!(inconsistent, 0, "a scrape had _count != +Inf bucket");
    let text = handle.render();
    assert!(consistent(&text));
    assert_eq!(
        rollout_records(&text),
        Some(records),
        "the exposition counts every rollout record made"
    );
    if mode == Mode::Timing {
        assert!(
            scrapes_while_timed > 0,
            "the scraper rendered during the scraping benchmark"
        );
    }
    let mut doc = json!({
        "scrapes": scrapes,
        "scrapes_while_timed": scrapes_while_timed,
        "inconsistent_scrapes": inconsistent,
    });
    if let Some(map) = doc.as_object_mut() {
        for (key, estimate) in [("idle", idle), ("scraping", scraping)] {
            if let Some(e) = estimate {
                map.insert(format!("{key}_median_ns"), json!(e.median_ns));
                map.insert(format!("{key}_low_ns"), json!(e.low_ns));
                map.insert(format!("{key}_high_ns"), json!(e.high_ns));
            }
        }
    }
    out.set("record_while_scraping", doc);
}
