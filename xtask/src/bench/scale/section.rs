//! The fleet-scale figures as Markdown: the section of `BENCHMARKS.md`
//! (the table, the growth verdicts, the chart) and the derived block of
//! `SCALE.md` (the 10,000-server plan's arithmetic), both from one
//! [`ScaleRun`], each between markers so either command can rewrite its
//! part without the other's.

use std::fmt::Write as _;

use super::figures::{ScaleRun, SizeFigures, Snapshot, Stats};
use super::CHART_PATH;

/// Marks the section in `BENCHMARKS.md`.
pub const BENCH_BEGIN: &str = "<!-- fleet-scale:begin (cargo xtask bench scale) -->";
/// Ends the section in `BENCHMARKS.md`.
pub const BENCH_END: &str = "<!-- fleet-scale:end -->";
/// Marks the derived block in `SCALE.md`.
pub const PLAN_BEGIN: &str = "<!-- derived:begin (cargo xtask bench scale) -->";
/// Ends the derived block in `SCALE.md`.
pub const PLAN_END: &str = "<!-- derived:end -->";

const RESOURCES: &str = "resources_servers";
const AGENTS: &str = "responses_api_agents";
const ORCHESTRATOR: &str = "orchestrator";

/// The servers the plan is for.
pub const PLAN_SERVERS: f64 = 10_000.0;
/// The production scrape interval the plan assumes, seconds.
pub const PLAN_INTERVAL_S: f64 = 15.0;

/// `text` with the part between `begin` and `end` (markers included)
/// replaced by `part`; `part` appended when the markers are missing.
pub fn splice(text: &str, begin: &str, end: &str, part: &str) -> String {
    match (text.find(begin), text.find(end)) {
        (Some(b), Some(e)) if b < e => {
            // The part's own last newline would add one per rewrite.
            let part = part.trim_end_matches('\n');
            format!("{}{part}{}", &text[..b], &text[e + end.len()..])
        }
        _ => format!("{}\n{part}\n", text.trim_end()),
    }
}

fn col(s: &SizeFigures, snap: &Snapshot) -> String {
    format!("{} processes, {}", s.processes, when(snap))
}

/// How long after the launch `snap` was taken: `60 s`, `10 min`.
fn when(snap: &Snapshot) -> String {
    if snap.after_s < 90.0 {
        format!("{:.0} s", snap.after_s)
    } else {
        format!("{:.0} min", snap.after_s / 60.0)
    }
}

fn get<'a>(m: &'a std::collections::BTreeMap<String, Stats>, k: &str) -> Option<&'a Stats> {
    m.get(k).filter(|s| s.n > 0)
}

fn range(s: Option<&Stats>, scale: f64, digits: usize) -> String {
    match s {
        None => "–".into(),
        Some(s) if (s.max - s.min).abs() * scale < 0.5 * 10f64.powi(-(digits as i32)) => {
            format!("{:.*}", digits, s.p50 * scale)
        }
        Some(s) => format!(
            "{:.*} ({:.*}–{:.*})",
            digits,
            s.p50 * scale,
            digits,
            s.min * scale,
            digits,
            s.max * scale
        ),
    }
}

/// One cell of the table: a column's figure as text.
type Cell<'a> = Box<dyn Fn(&SizeFigures, &Snapshot) -> String + 'a>;

/// A table with a column per `(size, snapshot)` and a row per `(name, cell)`.
fn table(o: &mut String, corner: &str, cols: &[Column<'_>], rows: &[(&str, Cell<'_>)]) {
    let _ = write!(o, "| {corner} |");
    for (s, snap) in cols {
        let _ = write!(o, " {} |", col(s, snap));
    }
    let _ = write!(o, "\n|---|");
    for _ in cols {
        let _ = write!(o, "---:|");
    }
    let _ = writeln!(o);
    for (name, cell) in rows {
        let _ = write!(o, "| {name} |");
        for (s, snap) in cols {
            let _ = write!(o, " {} |", cell(s, snap));
        }
        let _ = writeln!(o);
    }
}

/// `plain / gzip` KiB per scrape of the processes of `kind`.
fn exposition_kib(s: &Snapshot, kind: &str) -> String {
    format!(
        "{} / {}",
        range(get(&s.exposition_plain, kind), 1.0 / 1024.0, 1),
        range(get(&s.exposition_gzip, kind), 1.0 / 1024.0, 1)
    )
}

/// Every `(size, snapshot)` column, in order.
fn columns(run: &ScaleRun) -> Vec<Column<'_>> {
    run.sizes
        .iter()
        .flat_map(|s| s.snapshots.iter().map(move |snap| (s, snap)))
        .collect()
}

/// One measured quantity for the growth verdicts: its value at a column,
/// and whether linear growth means flat (a per-process cost) or
/// proportional to the fleet (a total).
struct Measure {
    name: &'static str,
    per_process: bool,
    value: fn(&SizeFigures, &Snapshot) -> Option<f64>,
}

const MEASURES: &[Measure] = &[
    Measure {
        name: "series per resources server",
        per_process: true,
        value: |_, s| get(&s.series, RESOURCES).map(|v| v.p50),
    },
    Measure {
        name: "series per agent",
        per_process: true,
        value: |_, s| get(&s.series, AGENTS).map(|v| v.p50),
    },
    Measure {
        name: "exposition bytes per resources server (gzip)",
        per_process: true,
        value: |_, s| get(&s.exposition_gzip, RESOURCES).map(|v| v.p50),
    },
    Measure {
        name: "scrape duration p99",
        per_process: true,
        value: |_, s| (s.scrape_ms.n > 0).then_some(s.scrape_ms.p99),
    },
    Measure {
        name: "RSS per resources server",
        per_process: true,
        value: |_, s| get(&s.rss_kib, RESOURCES).map(|v| v.p50),
    },
    Measure {
        name: "orchestrator CPU",
        per_process: false,
        value: |_, s| Some(s.orchestrator_cpu_pct),
    },
    Measure {
        name: "orchestrator RSS",
        per_process: false,
        value: |_, s| get(&s.rss_kib, ORCHESTRATOR).map(|v| v.p50),
    },
    Measure {
        name: "SD response bytes",
        per_process: false,
        value: |_, s| Some(s.sd.bytes as f64),
    },
    Measure {
        name: "SD request time p50",
        per_process: false,
        value: |_, s| (s.sd.request_ms.n > 0).then_some(s.sd.request_ms.p50),
    },
    Measure {
        name: "launch to first scrape p50",
        per_process: true,
        value: |f, _| (f.launch_to_first_scrape_s.n > 0).then_some(f.launch_to_first_scrape_s.p50),
    },
];

/// One measure's cost per process, relative to the smallest fleet, at
/// every size (first snapshot of each): `(processes, relative cost)`.
pub struct Line {
    /// The measure.
    pub name: &'static str,
    /// `(processes, relative cost per process)`, smallest fleet first.
    pub points: Vec<(f64, f64)>,
}

/// Every measure as a [`Line`] (those measured at the smallest size).
pub fn growth_lines(run: &ScaleRun) -> Vec<Line> {
    let per_process = |m: &Measure, f: &SizeFigures| {
        let snap = f.snapshots.first()?;
        let v = (m.value)(f, snap)?;
        Some(if m.per_process {
            v
        } else {
            v / f.processes as f64
        })
    };
    MEASURES
        .iter()
        .filter_map(|m| {
            let first = per_process(m, run.sizes.first()?)?;
            (first > 0.0).then(|| Line {
                name: m.name,
                points: run
                    .sizes
                    .iter()
                    .filter_map(|f| Some((f.processes as f64, per_process(m, f)? / first)))
                    .collect(),
            })
        })
        .collect()
}

/// A fleet size and one of its snapshots: a column of the table.
type Column<'a> = (&'a SizeFigures, &'a Snapshot);

/// The first snapshot of each size (the one every size has), smallest and largest.
fn ends(run: &ScaleRun) -> Option<(Column<'_>, Column<'_>)> {
    let first = run.sizes.first()?;
    let last = run.sizes.last()?;
    Some((
        (first, first.snapshots.first()?),
        (last, last.snapshots.first()?),
    ))
}

/// The growth verdicts, one line per measure: the factor from the smallest
/// to the largest fleet against the fleet's own factor.
fn growth(o: &mut String, run: &ScaleRun) {
    let Some(((small, s0), (large, s1))) = ends(run) else {
        return;
    };
    if small.processes == large.processes {
        return;
    }
    let fleet = large.processes as f64 / small.processes as f64;
    let _ = writeln!(
        o,
        "\nGrowth from {} to {} processes (×{fleet:.1}), first snapshot of each (a per-process cost grows linearly in total when it stays flat; a total when it grows at most ×{fleet:.1}; 25% is allowed for noise):\n",
        small.processes, large.processes
    );
    for m in MEASURES {
        let (Some(a), Some(b)) = ((m.value)(small, s0), (m.value)(large, s1)) else {
            let _ = writeln!(o, "- {}: not measured at both sizes", m.name);
            continue;
        };
        let factor = if a > 0.0 { b / a } else { f64::NAN };
        let limit = if m.per_process { 1.25 } else { fleet * 1.25 };
        let verdict = if factor.is_nan() {
            "not comparable (zero at the small size)".to_string()
        } else if factor <= limit {
            "linear or better".to_string()
        } else {
            format!("**faster than linear** (limit ×{limit:.2})")
        };
        let _ = writeln!(o, "- {}: ×{factor:.2}, {verdict}", m.name);
    }
}

/// Series per process over time at the size snapshotted more than once:
/// the largest count of each type at the first and the last snapshot. A
/// count that grows past the first snapshot's largest is growth with time.
fn over_time(o: &mut String, run: &ScaleRun) {
    let Some(size) = run.sizes.iter().find(|s| s.snapshots.len() > 1) else {
        return;
    };
    let (Some(first), Some(last)) = (size.snapshots.first(), size.snapshots.last()) else {
        return;
    };
    let _ = writeln!(
        o,
        "
Series per process over time, {} processes, the largest of each type at {} and at {} (a median may rise while label values first appear, e.g. a server's first failed `/verify` adds its status-500 request histogram; what must not happen is a count beyond the first snapshot's largest):
",
        size.processes,
        when(first),
        when(last)
    );
    for (kind, a) in &first.series {
        let b = last.series.get(kind).map_or(0.0, |s| s.max);
        let verdict = if b <= a.max {
            "bounded"
        } else {
            "**grew with time**"
        };
        let _ = writeln!(o, "- {kind}: {:.0} → {b:.0}, {verdict}", a.max);
    }
}

/// The `BENCHMARKS.md` section, markers included; a note when there is no run.
pub fn benchmarks_section(run: Option<&ScaleRun>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{BENCH_BEGIN}\n## Fleet scale\n");
    let Some(run) = run else {
        let _ = writeln!(
            o,
            "Not measured yet: run `cargo xtask bench scale`.\n\n{BENCH_END}"
        );
        return o;
    };
    if run.quick {
        let _ = writeln!(
            o,
            "**A `--quick` run: short snapshots that check the command, not figures to rely on.**\n"
        );
    }
    let _ = writeln!(
        o,
        "Written by `cargo xtask bench scale` on {} ({}); the figures are also in `xtask/bench/scale.json`, which the SCALE.md plan computes from. Per size: one gym-fleet (release build, Prometheus backend, process metrics on, the scale e2e's low rate: each agent one rollout at a time of 1–3 s, verification 20–80 ms), 3 resources servers to 1 agent, discovered by one Prometheus 2.53 server through the orchestrator's `GET /sd` (scrape interval and SD refresh {} s), all on this 2-core machine. At each snapshot: samples per scrape (`scrape_samples_scraped`) and scrape duration (`scrape_duration_seconds`, every raw sample of the last window) as Prometheus saw them; every `/metrics` fetched once plain and once with `Accept-Encoding: gzip`; resident memory from `/proc`; CPU over the window since the last snapshot (from `/proc`, % of one core); 50 `GET /sd` on a new connection each. Launch to first scrape: each process's own start time (`process_start_time_seconds`) against its first stored `up` sample; it is bounded below by the SD refresh and the scrape interval. Cells show the median and, where they differ, the range over the processes. Every process, the scraper and this command share the machine's 2 cores, so a scrape's duration includes any wait for a core. A p99 is the nearest rank: over fewer than 100 scrapes it is the slowest one. CPU is counted in clock ticks (10 ms), so a figure under about 0.05% over a one-minute window is at the resolution's edge.\n",
        run.finished, run.machine, run.interval_s
    );
    let cols = columns(run);
    let rows: Vec<(&str, Cell)> = vec![
        (
            "series (samples per scrape), orchestrator",
            Box::new(|_, s| range(get(&s.series, ORCHESTRATOR), 1.0, 0)),
        ),
        (
            "series, resources server",
            Box::new(|_, s| range(get(&s.series, RESOURCES), 1.0, 0)),
        ),
        (
            "series, agent",
            Box::new(|_, s| range(get(&s.series, AGENTS), 1.0, 0)),
        ),
        (
            "exposition KiB per scrape, resources server, plain / gzip",
            Box::new(|_, s| exposition_kib(s, RESOURCES)),
        ),
        (
            "exposition KiB per scrape, agent, plain / gzip",
            Box::new(|_, s| exposition_kib(s, AGENTS)),
        ),
        (
            "exposition KiB per scrape, orchestrator, plain / gzip",
            Box::new(|_, s| exposition_kib(s, ORCHESTRATOR)),
        ),
        (
            "scrape duration ms, p50 / p99 (every target)",
            Box::new(|_, s| format!("{:.2} / {:.2}", s.scrape_ms.p50, s.scrape_ms.p99)),
        ),
        (
            "RSS MiB, resources server",
            Box::new(|_, s| range(get(&s.rss_kib, RESOURCES), 1.0 / 1024.0, 1)),
        ),
        (
            "RSS MiB, agent",
            Box::new(|_, s| range(get(&s.rss_kib, AGENTS), 1.0 / 1024.0, 1)),
        ),
        (
            "launch to first scrape s, p50 / max",
            Box::new(|f, _| {
                format!(
                    "{:.1} / {:.1}",
                    f.launch_to_first_scrape_s.p50, f.launch_to_first_scrape_s.max
                )
            }),
        ),
    ];
    table(&mut o, "per process", &cols, &rows);
    let totals: Vec<(&str, Cell)> = vec![
        (
            "orchestrator CPU, % of a core",
            Box::new(|_, s| format!("{:.2}", s.orchestrator_cpu_pct)),
        ),
        (
            "orchestrator RSS MiB",
            Box::new(|_, s| range(get(&s.rss_kib, ORCHESTRATOR), 1.0 / 1024.0, 1)),
        ),
        (
            "every process's CPU together, % of a core",
            Box::new(|_, s| format!("{:.1}", s.fleet_cpu_pct)),
        ),
        (
            "samples scraped per second",
            Box::new(|_, s| format!("{:.0}", s.scraped_samples_per_s)),
        ),
        (
            "scraper (Prometheus server) CPU, % of a core / RSS MiB",
            Box::new(|_, s| {
                format!(
                    "{:.1} / {:.0}",
                    s.scraper_cpu_pct,
                    s.scraper_rss_kib / 1024.0
                )
            }),
        ),
        (
            "`GET /sd`: targets, bytes (gzip would be)",
            Box::new(|_, s| format!("{}, {} ({})", s.sd.targets, s.sd.bytes, s.sd.gzip_bytes)),
        ),
        (
            "`GET /sd` ms, p50 / p99",
            Box::new(|_, s| format!("{:.2} / {:.2}", s.sd.request_ms.p50, s.sd.request_ms.p99)),
        ),
    ];
    o.push('\n');
    table(&mut o, "whole fleet", &cols, &totals);
    growth(&mut o, run);
    over_time(&mut o, run);
    let _ = writeln!(
        o,
        "\n`GET /sd` of an orchestrator install holding synthetic lists (`src/bin/sd_synthetic.rs`: the Prometheus backend as the orchestrator, targets shaped as the fleet's), 50 requests each:\n\n| targets | bytes | gzip would be | publish (render) ms | request ms p50 | p99 |\n|---:|---:|---:|---:|---:|---:|"
    );
    for c in &run.sd_synthetic {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.2} | {:.2} |",
            c.targets,
            c.bytes,
            c.gzip_bytes,
            c.publish_ms.map_or("–".into(), |m| format!("{m:.2}")),
            c.request_ms.p50,
            c.request_ms.p99
        );
    }
    let _ = writeln!(
        o,
        "\n![Cost per process relative to the smallest fleet]({CHART_PATH})\n\n{BENCH_END}"
    );
    o
}

/// VictoriaMetrics: "It is recommended to use the single-node version for
/// ingestion rates lower than a million data points per second."
/// (<https://docs.victoriametrics.com/victoriametrics/cluster-victoriametrics/>)
const VM_SINGLE_NODE_SAMPLES_S: f64 = 1_000_000.0;
/// VictoriaMetrics, troubleshooting: "more than a CPU core per 100K
/// ingested data points per second" is the sign of too little RAM, so a
/// healthy node uses at most this.
/// (<https://docs.victoriametrics.com/victoriametrics/single-server-victoriametrics/#troubleshooting>)
const VM_SAMPLES_S_PER_CORE_AT_MOST: f64 = 100_000.0;
/// VictoriaMetrics' setup-size guide: a sample takes "less or around 1
/// byte" after compression, and the index "about 20%" more.
/// (<https://docs.victoriametrics.com/guides/understand-your-setup-size/>)
const VM_BYTES_PER_SAMPLE: f64 = 1.0;
/// The index's share on top of the samples (same guide).
const VM_INDEX_SHARE: f64 = 0.2;
/// The only published RAM per active series: the Adsterra case study,
/// "active time series: 10M" with "about 50GB of RAM".
/// (<https://docs.victoriametrics.com/victoriametrics/casestudies/>)
const VM_RAM_BYTES_PER_SERIES: f64 = 50e9 / 10e6;
/// The capacity-planning headroom: "50% of free RAM", "50% of spare CPU",
/// "At least 20% of free storage space".
/// (<https://docs.victoriametrics.com/victoriametrics/cluster-victoriametrics/#capacity-planning>)
const VM_FREE_RAM: f64 = 0.5;
/// See [`VM_FREE_RAM`].
const VM_SPARE_CPU: f64 = 0.5;
/// See [`VM_FREE_RAM`].
const VM_FREE_DISK: f64 = 0.2;
/// Retention the plan sizes the disk for, days.
const RETENTION_DAYS: f64 = 30.0;
/// Replication factor; the cluster "must contain at least `2*N-1`
/// `vmstorage` nodes".
const REPLICATION: f64 = 2.0;
/// The only published collector throughput found: Splunk's distribution of
/// the OpenTelemetry Collector, "20,000 data points per second" of metrics
/// per CPU core.
const COLLECTOR_POINTS_S_PER_CORE: f64 = 20_000.0;

/// The rows that combine the measured load with published figures.
fn published(o: &mut String, samples_s: f64, series: f64, scraper_cores: f64) {
    // Replication "increases resource usage - CPU, RAM, disk space, network
    // bandwidth - by up to `-replicationFactor=N` times" [VM cluster].
    let cpu = samples_s * REPLICATION / VM_SAMPLES_S_PER_CORE_AT_MOST / (1.0 - VM_SPARE_CPU);
    let ram = series * REPLICATION * VM_RAM_BYTES_PER_SERIES / (1.0 - VM_FREE_RAM);
    let disk_day = samples_s * 86_400.0 * VM_BYTES_PER_SAMPLE * (1.0 + VM_INDEX_SHARE);
    let disk = disk_day * (RETENTION_DAYS + 1.0) * REPLICATION / (1.0 - VM_FREE_DISK);
    let single = if samples_s < VM_SINGLE_NODE_SAMPLES_S {
        "below"
    } else {
        "above"
    };
    let _ = writeln!(
        o,
        "| VictoriaMetrics: single node or cluster | {single} the 1M samples/s single-node limit | samples/s against the docs' \"single-node version for ingestion rates lower than a million data points per second\" [VM cluster] |"
    );
    let _ = writeln!(
        o,
        "| VictoriaMetrics CPU (vminsert + vmstorage together), replication {REPLICATION:.0}, at most | {cpu:.1} cores | samples/s × {REPLICATION:.0} / 100K per core (the docs' sign of trouble: \"more than a CPU core per 100K ingested data points per second\" [VM troubleshooting]), ÷ (1 − 50% spare CPU [VM capacity]) |"
    );
    let _ = writeln!(
        o,
        "| vmstorage RAM, replication {REPLICATION:.0} | {:.1} GB | active series × {REPLICATION:.0} × {:.0} B (the Adsterra case study: 10M series in about 50 GB [VM case studies]), ÷ (1 − 50% free RAM [VM capacity]) |",
        ram / 1e9,
        VM_RAM_BYTES_PER_SERIES
    );
    let _ = writeln!(
        o,
        "| vmstorage disk per day, one copy | {:.1} GB | samples/s × 86,400 × 1 byte per sample × 1.2 for the index [VM setup size] |",
        disk_day / 1e9
    );
    let _ = writeln!(
        o,
        "| vmstorage disk, {RETENTION_DAYS:.0} days, replication {REPLICATION:.0} | {:.0} GB | a day × ({RETENTION_DAYS:.0} + 1) × {REPLICATION:.0} ÷ (1 − 20% free disk [VM capacity]) |",
        disk / 1e9
    );
    let _ = writeln!(
        o,
        "| OTLP instead: collector cores | {:.1} | data points/s (= samples/s at a {PLAN_INTERVAL_S:.0} s export interval) / 20,000 per core [Splunk collector sizing], ÷ (1 − 50% spare) |",
        samples_s / COLLECTOR_POINTS_S_PER_CORE / (1.0 - VM_SPARE_CPU)
    );
    let _ = writeln!(
        o,
        "| scrapers (vmagent members or Prometheus agent shards), 1 core each at 50% spare | {:.0} | the measured scraper cores above ÷ 0.5, at least 2 (so one may fail) |",
        (scraper_cores / 0.5).ceil().max(2.0)
    );
}

/// The figures the plan starts from: the largest fleet's last snapshot.
fn basis(run: &ScaleRun) -> Option<Column<'_>> {
    let size = run.sizes.last()?;
    Some((size, size.snapshots.last()?))
}

/// The `SCALE.md` block: every derived number with its formula and the
/// measurement it comes from; markers included.
pub fn plan_block(run: Option<&ScaleRun>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{PLAN_BEGIN}");
    let Some((r, (size, snap))) = run.and_then(|r| Some((r, basis(r)?))) else {
        let _ = writeln!(
            o,
            "No measurement yet: run `cargo xtask bench scale`.\n{PLAN_END}"
        );
        return o;
    };
    let at = format!(
        "BENCHMARKS.md § Fleet scale, column \"{}\" (run of {})",
        col(size, snap),
        r.finished
    );
    let p50 =
        |m: &std::collections::BTreeMap<String, Stats>, k: &str| get(m, k).map_or(0.0, |s| s.p50);
    let share_r = size.servers as f64 / (size.servers + size.agents) as f64;
    let per_child = |m: &std::collections::BTreeMap<String, Stats>| {
        share_r * p50(m, RESOURCES) + (1.0 - share_r) * p50(m, AGENTS)
    };
    let series = per_child(&snap.series);
    let total_series = PLAN_SERVERS * series + p50(&snap.series, ORCHESTRATOR);
    let samples_s = total_series / PLAN_INTERVAL_S;
    let plain = per_child(&snap.exposition_plain);
    let gzip = per_child(&snap.exposition_gzip);
    let wire_plain = PLAN_SERVERS * plain / PLAN_INTERVAL_S;
    let wire_gzip = PLAN_SERVERS * gzip / PLAN_INTERVAL_S;
    let scraper_cost = if snap.scraped_samples_per_s > 0.0 {
        snap.scraper_cpu_pct / 100.0 / snap.scraped_samples_per_s
    } else {
        f64::NAN
    };
    let scraper_cores = samples_s * scraper_cost;
    let rss_child = per_child(&snap.rss_kib) / 1024.0;
    let _ = writeln!(
        o,
        "| quantity for {PLAN_SERVERS:.0} servers at a {PLAN_INTERVAL_S:.0} s interval | value | how |\n|---|---:|---|"
    );
    let _ = writeln!(
        o,
        "| series per server (3 resources servers to 1 agent) | {series:.0} | {:.0} × {share_r:.2} + {:.0} × {:.2}, the medians of {at} |",
        p50(&snap.series, RESOURCES),
        p50(&snap.series, AGENTS),
        1.0 - share_r
    );
    let _ = writeln!(
        o,
        "| active series | {total_series:.0} | {PLAN_SERVERS:.0} × {series:.0} + the orchestrator's {:.0} |",
        p50(&snap.series, ORCHESTRATOR)
    );
    let _ = writeln!(
        o,
        "| samples/s ingested | {samples_s:.0} | active series / {PLAN_INTERVAL_S:.0} s |"
    );
    let _ = writeln!(
        o,
        "| scrape bytes/s on the wire, gzip (plain) | {:.1} MB/s ({:.1} MB/s) | {PLAN_SERVERS:.0} × {gzip:.0} B ({plain:.0} B) per scrape / {PLAN_INTERVAL_S:.0} s, exposition sizes of {at} |",
        wire_gzip / 1e6,
        wire_plain / 1e6
    );
    let _ = writeln!(
        o,
        "| scraper CPU per 1,000 samples/s | {:.4} cores | the Prometheus server's {:.1}% of a core for {:.0} samples/s, {at} |",
        scraper_cost * 1000.0,
        snap.scraper_cpu_pct,
        snap.scraped_samples_per_s
    );
    let _ = writeln!(
        o,
        "| scraper cores for the whole fleet | {scraper_cores:.2} | samples/s × the row above (a server that stores; an agent does less) |"
    );
    let _ = writeln!(
        o,
        "| resident memory of the simulated servers | {:.1} GiB | {PLAN_SERVERS:.0} × {rss_child:.1} MiB (the median RSS, weighted as above, {at}); a real server holds its model and data besides, and the metrics' own share is in BENCHMARKS.md § Memory |",
        PLAN_SERVERS * rss_child / 1024.0
    );
    let _ = writeln!(
        o,
        "| orchestrator at {} processes | {:.2}% of a core, {:.1} MiB | {at} |",
        size.processes,
        snap.orchestrator_cpu_pct,
        p50(&snap.rss_kib, ORCHESTRATOR) / 1024.0
    );
    let orchestrator_10k = snap.orchestrator_cpu_pct * PLAN_SERVERS / size.processes as f64;
    let _ = writeln!(
        o,
        "| orchestrator CPU at {PLAN_SERVERS:.0} servers, if linear | {orchestrator_10k:.1}% of a core | the row above × {PLAN_SERVERS:.0} / {} (its growth verdict is in BENCHMARKS.md) |",
        size.processes
    );
    if let Some(sd) = r
        .sd_synthetic
        .iter()
        .find(|c| c.targets == PLAN_SERVERS as usize)
    {
        let _ = writeln!(
            o,
            "| `GET /sd` at {} targets | {:.2} MB ({:.0} KB gzipped), {:.1} ms p50, {:.1} ms p99; publish {} ms | BENCHMARKS.md § Fleet scale, synthetic lists (run of {}) |",
            sd.targets,
            sd.bytes as f64 / 1e6,
            sd.gzip_bytes as f64 / 1e3,
            sd.request_ms.p50,
            sd.request_ms.p99,
            sd.publish_ms.map_or("–".into(), |m| format!("{m:.1}")),
            r.finished
        );
    }
    published(&mut o, samples_s, total_series, scraper_cores);
    let _ = writeln!(o, "{PLAN_END}");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::scale::figures::SdCost;
    use std::collections::BTreeMap;

    fn one(v: f64) -> Stats {
        Stats::of(&[v])
    }

    fn by_type(orchestrator: f64, resources: f64, agents: f64) -> BTreeMap<String, Stats> {
        BTreeMap::from([
            (ORCHESTRATOR.to_string(), one(orchestrator)),
            (RESOURCES.to_string(), one(resources)),
            (AGENTS.to_string(), one(agents)),
        ])
    }

    fn size(processes: usize, orchestrator_cpu_pct: f64) -> SizeFigures {
        let servers = (processes - 1) * 3 / 4;
        SizeFigures {
            processes,
            servers,
            agents: processes - 1 - servers,
            launch_to_first_scrape_s: one(10.0),
            snapshots: vec![Snapshot {
                after_s: 60.0,
                series: by_type(11.0, 48.0, 28.0),
                exposition_plain: by_type(2000.0, 8000.0, 4000.0),
                exposition_gzip: by_type(700.0, 1200.0, 800.0),
                scrape_ms: one(1.0),
                rss_kib: by_type(5000.0, 4500.0, 4600.0),
                orchestrator_cpu_pct,
                fleet_cpu_pct: processes as f64,
                scraper_cpu_pct: 1.0,
                scraper_rss_kib: 70_000.0,
                scraped_samples_per_s: 1000.0,
                sd: SdCost {
                    targets: processes,
                    bytes: processes * 190,
                    gzip_bytes: processes * 10,
                    request_ms: one(0.2),
                    publish_ms: None,
                },
            }],
        }
    }

    fn run(cpu_small: f64, cpu_large: f64) -> ScaleRun {
        ScaleRun {
            finished: "now".into(),
            machine: "m".into(),
            interval_s: 5.0,
            quick: false,
            sizes: vec![size(10, cpu_small), size(200, cpu_large)],
            sd_synthetic: vec![],
        }
    }

    #[test]
    fn a_quadratic_orchestrator_is_called_out_and_flat_costs_pass() {
        // ×20 processes; ×400 CPU is quadratic.
        let text = benchmarks_section(Some(&run(0.1, 40.0)));
        assert!(text.starts_with(BENCH_BEGIN) && text.trim_end().ends_with(BENCH_END));
        assert!(
            text.contains("- orchestrator CPU: ×400.00, **faster than linear**"),
            "{text}"
        );
        assert!(
            text.contains("- series per resources server: ×1.00, linear or better"),
            "{text}"
        );
        let linear = benchmarks_section(Some(&run(0.1, 2.0)));
        assert!(
            linear.contains("- orchestrator CPU: ×20.00, linear or better"),
            "{linear}"
        );
    }

    #[test]
    fn the_plan_multiplies_the_largest_fleet_s_figures_out() {
        let text = plan_block(Some(&run(0.1, 2.0)));
        // 149 resources servers and 50 agents: 48 × 149/199 + 28 × 50/199 ≈ 42.97 per server.
        let per = 48.0 * 149.0 / 199.0 + 28.0 * 50.0 / 199.0;
        let total = 10_000.0 * per + 11.0;
        assert!(
            text.contains(&format!("| active series | {total:.0} |")),
            "{text}"
        );
        assert!(
            text.contains(&format!("| samples/s ingested | {:.0} |", total / 15.0)),
            "{text}"
        );
        assert!(text.contains("below the 1M samples/s"), "{text}");
        assert!(plan_block(None).contains("No measurement yet"));
    }

    #[test]
    fn splicing_replaces_only_between_the_markers() {
        let doc = format!("a\n{BENCH_BEGIN}\nold\n{BENCH_END}\nb\n");
        let new = splice(
            &doc,
            BENCH_BEGIN,
            BENCH_END,
            &format!("{BENCH_BEGIN}\nnew\n{BENCH_END}"),
        );
        assert_eq!(new, format!("a\n{BENCH_BEGIN}\nnew\n{BENCH_END}\nb\n"));
        let appended = splice("a\n", BENCH_BEGIN, BENCH_END, "part");
        assert_eq!(appended, "a\npart\n");
        let part = format!("{BENCH_BEGIN}\nnew\n{BENCH_END}\n");
        let twice = splice(
            &splice(&doc, BENCH_BEGIN, BENCH_END, &part),
            BENCH_BEGIN,
            BENCH_END,
            &part,
        );
        assert_eq!(
            twice,
            format!("a\n{BENCH_BEGIN}\nnew\n{BENCH_END}\nb\n"),
            "stable"
        );
    }
}
