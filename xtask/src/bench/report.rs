//! `BENCHMARKS.md`: a table per section, the ratios, the targets with a
//! verdict each, the machine, the versions and the exact command. The prose
//! and the tables' headers are blocks of `report.md` (see [`Template`]), the
//! figures come from [`Results`], and [`table`] writes every table.

use super::callgrind::CALLS;
use super::figures::{Doc, Row};
use super::http_wrk::{self, Rounds};
use super::ipc::{implausible, MAX_IPC};
use super::results::{paired_throughput_ratio, ratio, Results, ROLLOUT};
use super::template::Template;

/// Where the record-path chart is, relative to the workspace root.
pub const CHART_PATH: &str = "xtask/bench/record-path.svg";
/// The most instructions per call the facade record may take with the prom
/// backend installed (issue 20), net of the empty loop.
const MAX_INSTRUCTIONS: f64 = 50.0;
/// The callgrind loops' modes, and the calls they make.
const MODES: [(&str, &str); 2] = [
    ("rollout", "record_rollout_duration"),
    ("verify", "record_verify"),
];
/// Our otel facade's and recorder's rows, and the bare SDK's.
const OTEL: [&str; 3] = [
    "gym-metrics-otel record_rollout",
    "gym-metrics-otel OtelRecorder direct",
    "opentelemetry_sdk",
];

/// `v` to `digits` decimals and `unit`, or `none` when missing.
fn fmt(v: Option<f64>, digits: usize, unit: &str, none: &str) -> String {
    v.map_or_else(|| none.into(), |v| format!("{v:.digits$}{unit}"))
}

/// A ratio to 2 decimals (`0.75x`), or `n/a`.
fn fmt_ratio(q: Option<f64>) -> String {
    fmt(q, 2, "x", "n/a")
}

/// `v` to `digits` decimals, or a dash.
fn dash(v: Option<f64>, digits: usize) -> String {
    fmt(v, digits, "", "–")
}

/// A confidence interval to `digits` decimals, or a dash.
fn ci(low: Option<f64>, high: Option<f64>, digits: usize) -> String {
    let range = |(l, h)| format!("{l:.digits$} – {h:.digits$}");
    low.zip(high).map_or_else(|| "–".into(), range)
}

/// One markdown table: `header` (a `table_*` block of report.md: the header
/// and alignment rows), then a line per row; a row shorter than the header (a
/// figure failed) leaves its last cells blank (n cells take n + 1 bars).
fn table(header: String, rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let bars = header.lines().next().map_or(0, |l| l.matches('|').count());
    rows.into_iter().fold(header, |o, row| {
        let blank = " |".repeat(bars.saturating_sub(row.len() + 1));
        format!("{o}\n| {} |{blank}", row.join(" | "))
    })
}

/// Why a bench's figures are missing.
fn not_measured(e: &str) -> String {
    format!("_Not measured in this run: {e}_")
}

/// `text` between blank lines, as a section's prose or a missing bench's note.
fn section(text: String) -> String {
    format!("\n{text}\n")
}

/// Instructions per call of a callgrind mode, as [`Results`] counts them.
type PerCall = fn(&Results, &str) -> Option<f64>;
/// Whether a figure meets its target.
type Meets = fn(f64) -> bool;

/// The targets' table: what, measured, verdict.
fn targets(t: &Template, r: &Results) -> String {
    let mut rows = Vec::new();
    let mut add = |what: String, measured: String, met: Option<bool>| {
        let verdict = match met {
            // A flagged time is neither met nor missed: it is not a result.
            _ if measured.starts_with("flagged") => "**flagged**",
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "not measured",
        };
        rows.push(vec![what, measured, verdict.into()]);
    };
    let call = |block: &str, call: &str| t.fill(block, &[("call", call)]);
    let per_call: [(&str, PerCall); 3] = [
        ("target_call_itself", Results::prom_record_per_call),
        ("target_through_facade", Results::prom_per_call),
        ("target_user_build", Results::user_per_call),
    ];
    for (block, per_call) in per_call {
        for (mode, name) in MODES {
            let n = per_call(r, mode);
            let met = n.map(|n| n <= MAX_INSTRUCTIONS);
            add(call(block, name), fmt(n, 2, "", "n/a"), met);
        }
    }
    let n = dash(r.prom_per_call("rollout"), 0);
    for (block, threads, limit) in [
        ("target_peer_1", "threads_1", 0.5),
        ("target_peer_1_kind", "threads_1", 0.8),
        ("target_peer_2", "threads_2", 0.25),
        ("target_lead_2", "threads_2", 1.0),
    ] {
        let (ours, peer, q, implied) = r.against_peer(threads);
        let [o, mhz, i] = [ours, r.cpu.clock_mhz(), implied].map(|v| v.unwrap_or(f64::NAN));
        let measured = match (ours, peer) {
            _ if implausible(implied) => format!("flagged, not a result: {n} instructions in {o:.2} ns at {mhz:.0} MHz would be {i:.1} per cycle (> {MAX_IPC})"),
            (Some(o), Some((p, m))) => format!("{} ({o:.2} ns vs {p} {m:.2} ns)", fmt_ratio(q)),
            _ => fmt_ratio(q),
        };
        let met = q.map(|q| if limit >= 1.0 { q < limit } else { q <= limit });
        add(t.text(block), measured, met);
    }
    let (prom, otel) = (&r.record_prom, &r.record_otel);
    let one = |doc: &Doc, row: &str| doc.median("threads_1", row);
    let verify = |doc: &Doc, b: &str| {
        let m = |call: &str| one(doc, &format!("gym-metrics-{b} record_{call}"));
        ratio(m("verify"), m("rollout"))
    };
    let own = ratio(prom.median("threads_2", ROLLOUT), one(prom, ROLLOUT));
    let sdk = ratio(one(otel, OTEL[0]), one(otel, OTEL[2]));
    let otel_prom = ratio(one(otel, OTEL[0]), one(prom, ROLLOUT));
    let otel_own = ratio(otel.median("threads_2", OTEL[0]), one(otel, OTEL[0]));
    let ((_, work, peer_work), (render, scraping)) = (r.http_work(), r.scrape_ratios());
    let wrk = r.wrk.as_ref().ok();
    let wrk = wrk.map(|w| w.ours.requests_per_sec / w.fixed.requests_per_sec);
    let by_ratio: [(&str, Option<f64>, Meets); 11] = [
        ("target_own_2", own, |q| q <= 1.5),
        ("target_otel", sdk, |q| q <= 1.1),
        ("target_otel_prom", otel_prom, |q| q <= 1.2),
        ("target_otel_own_2", otel_own, |q| q <= 1.5),
        ("target_verify_prom", verify(prom, "prom"), |q| q <= 1.5),
        ("target_verify_otel", verify(otel, "otel"), |q| q <= 1.5),
        ("target_http", ratio(work, peer_work), |q| q <= 0.15),
        ("target_http_wrk", r.http_throughput_ratio(), |q| q >= 0.97),
        ("target_render", render, |q| q <= 1.0),
        ("target_wrk", wrk, |q| q >= 0.7),
        ("target_scraping", scraping, |q| q <= 1.2),
    ];
    for (block, q, ok) in by_ratio {
        add(t.text(block), fmt_ratio(q), q.map(ok));
    }
    let g = |k: &str| r.scrape.num(&format!("/record_while_scraping/{k}"));
    let bad = g("inconsistent_scrapes");
    let [b, s] = [bad, g("scrapes")].map(|v| v.unwrap_or(f64::NAN));
    let consistent = format!("{b} inconsistent of {s} scrapes");
    let met = bad.map(|b| b == 0.0);
    add(t.text("target_consistent"), consistent, met);
    // Two loops' instructions side by side, and whether they compare as `ok`.
    let versus = |a: Option<u64>, b: Option<u64>, ok: fn(&u64, &u64) -> bool| {
        let both = a.zip(b);
        let shown = both.map_or_else(|| "n/a".into(), |(a, b)| format!("{a} vs {b}"));
        (shown, both.map(|(a, b)| ok(&a, &b)))
    };
    let noop = |m: &str| r.count("noop backend", m);
    let none = |m: &str| r.count("nothing installed", m);
    for (mode, name) in MODES {
        let (shown, met) = versus(noop(mode), noop("empty"), u64::eq);
        add(call("target_noop", name), shown, met);
        // Per call, to the hundredth: the loops' constant set-up (a few
        // instructions per loop, not per call) must not tip the verdict.
        let over = none(mode).zip(none("empty"));
        let over = over.map(|(f, e)| (f as f64 - e as f64) / CALLS as f64);
        let per_call = over.map(|p| (p * 100.0).round() / 100.0);
        let measured = fmt(per_call, 2, " per call", "n/a");
        let met = per_call.map(|p| p <= 4.0);
        add(call("target_nothing", name), measured, met);
    }
    let (shown, met) = versus(noop("metrics"), none("metrics"), u64::le);
    add(t.text("target_noop_metrics"), shown, met);
    for rss in &r.rss {
        let (measured, met) = match &rss.figures {
            Ok((small, large, n)) => {
                let kib = format!("{small} KiB after 10,000 records, {large} KiB after {n}");
                (kib, Some(large.saturating_sub(*small) <= 256))
            }
            Err(e) => (e.clone(), None),
        };
        let what = t.fill("target_rss", &[("backend", rss.backend)]);
        add(what, measured, met);
    }
    let (measured, met) = r.process_spread();
    add(t.text("target_processes"), measured, met);
    let (alloc, met) = (r.no_alloc.clone().err(), Some(r.no_alloc.is_ok()));
    let measured = alloc.unwrap_or_else(|| t.text("no_alloc_records"));
    add(t.text("target_no_alloc"), measured, met);
    table(t.text("table_targets"), rows)
}

/// With 2 threads, the otel backend against the bare SDK: not one of the
/// issue's targets (it gives thread counts only for the prom ones), reported
/// beside them with its control and what drives it.
fn contended_otel(t: &Template, r: &Results) -> Option<String> {
    let m = |k: &str| r.record_otel.median("threads_2", k);
    let [f, d, b] = OTEL.map(&m);
    let (f, d, b) = (f?, d?, b?);
    let ns = |v: f64| format!("{v:.0}");
    let control = m("control").map_or_else(String::new, |c| {
        let values = [("control", ns(c)), ("ratio", fmt_ratio(Some(c / b)))];
        t.fill("contended_otel_control", &values)
    });
    let values = [("facade", ns(f)), ("direct", ns(d)), ("sdk", ns(b))];
    let more = [("ratio", fmt_ratio(Some(f / b))), ("control", control)];
    Some(t.fill("contended_otel", &[&values[..], &more].concat()))
}

/// Why a target was missed and what meeting it would take: reasoning from
/// this run's own rows, a list under its heading for the targets it missed.
fn notes(t: &Template, r: &Results) -> Option<String> {
    let f2 = |v: f64| format!("{v:.2}");
    let mut lines = Vec::new();
    let ((facade, one, _, _), (two, peer, _, _)) =
        (r.against_peer("threads_1"), r.against_peer("threads_2"));
    let direct = "gym-metrics-prom PrometheusRecorder direct";
    let direct = r.record_prom.median("threads_1", direct);
    if let (Some(f), Some(d), Some((_, p))) = (facade, direct, one) {
        if f > 0.5 * p {
            let values = [
                ("direct", f2(d)),
                ("direct_ratio", fmt_ratio(Some(d / p))),
                ("facade", f2(f)),
                ("instructions", dash(r.prom_per_call("rollout"), 0)),
                ("limit", f2(0.5 * p)),
            ];
            lines.push(t.fill("note_record_1_thread", &values));
        }
    }
    if let (Some(two_ns), Some((peer, p))) = (two, peer) {
        if two_ns > 0.25 * p {
            let (own, peer_ns, limit) = (fmt_ratio(ratio(two, facade)), f2(p), f2(0.25 * p));
            let values = [("own_ratio", own), ("peer", peer), ("peer_ns", peer_ns)];
            let values = [&values[..], &[("limit", limit)]].concat();
            lines.push(t.fill("note_record_2_threads", &values));
        }
    }
    if let [Some(f), Some(d), Some(b)] = OTEL.map(|k| r.record_otel.median("threads_1", k)) {
        if f > 1.1 * b {
            let (q, adds, sdk) = (fmt_ratio(Some(d / b)), f2(f - d), format!("{b:.0}"));
            let values = [("direct_ratio", q), ("facade_adds", adds), ("sdk", sdk)];
            lines.push(t.fill("note_otel_1_thread", &values));
        }
    }
    let (render, scraping) = r.scrape_ratios();
    let wrk = r.wrk.as_ref();
    let wrk = wrk.is_ok_and(|w| w.ours.requests_per_sec < 0.7 * w.fixed.requests_per_sec);
    let missed = [
        ("note_render", render.is_some_and(|q| q > 1.0)),
        ("note_scraping", scraping.is_some_and(|q| q > 1.2)),
        ("note_wrk", wrk),
    ];
    lines.extend(missed.iter().filter(|(_, m)| *m).map(|(b, _)| t.text(b)));
    let heading = t.text("notes_heading");
    (!lines.is_empty()).then(|| format!("\n{heading}\n\n- {}", lines.join("\n- ")))
}

/// A table of times: median, interval, net of `base`, ratio to `to`; with
/// `ours` (the prom record path) also instructions per call and per cycle, a
/// median implying more than [`MAX_IPC`] struck through and flagged (no ratio).
fn times(
    t: &Template,
    rows: &[Row],
    base: Option<f64>,
    to: Option<(&str, f64)>,
    ours: Option<&Results>,
) -> String {
    let header = ours.map_or("table_times", |_| "table_record");
    let named = to.map_or_else(String::new, |(n, _)| format!(" to {n}"));
    let rows = rows.iter().map(|row| {
        let (n, ipc) = ours.map_or((None, None), |r| r.row_ipc(row));
        let (flagged, ci) = (implausible(ipc), ci(row.low_ns, row.high_ns, 2));
        let (mut median, mut ipc) = (dash(row.median_ns, 2), fmt(ipc, 1, "", ""));
        let q = match to.zip(row.median_ns) {
            Some(_) if flagged => "flagged".into(),
            Some(((_, v), m)) => format!("{:.2}x", m / v),
            None => String::new(),
        };
        if flagged {
            median = format!("~~{median}~~ flagged");
            ipc = format!("**{ipc} (> {MAX_IPC})**");
        }
        let net = fmt(base.zip(row.median_ns).map(|(b, m)| m - b), 2, "", "");
        let mut cells = vec![row.name.clone(), median, ci, net, q];
        cells.extend(ours.map(|_| [fmt(n, 1, "", ""), ipc]).into_iter().flatten());
        cells
    });
    table(t.fill(header, &[("reference", named)]), rows)
}

/// One row of the quantile table: exact, native and classic, and how far
/// each estimate is from the exact quantile.
fn quantile_row(row: &serde_json::Value) -> Vec<String> {
    let g = |k: &str| row.get(k).and_then(serde_json::Value::as_f64);
    let off = |k| ratio(g(k), g("exact")).map(|q| 100.0 * (q - 1.0));
    let error = |k| fmt(off(k), 1, " %", "–");
    let [exact, native, classic] = ["exact", "native", "classic"].map(|k| dash(g(k), 2));
    let name = row.get("distribution").and_then(|d| d.as_str());
    let q = dash(g("q").map(|q| 100.0 * q), 0);
    vec![
        name.unwrap_or("–").into(),
        format!("p{q}"),
        exact,
        native,
        error("native"),
        classic,
        error("classic"),
    ]
}

/// The History section: its prose, and the history file as a table, one row
/// per run, machines side by side.
fn history(t: &Template, history: &[serde_json::Value]) -> String {
    use serde_json::Value;
    let rows = history.iter().map(|h| {
        let text = |k: &str| match h.get(k) {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => "–".into(),
            Some(other) => other.to_string(),
        };
        let figure = |k: &str, unit| {
            let v = h.pointer(&format!("/figures/{k}")).and_then(Value::as_f64);
            fmt(v, 2, unit, "–")
        };
        let mut row = ["finished", "cpu"].map(text).to_vec();
        row.push(format!("{} / {}", text("family"), text("model")));
        row.extend(["mhz", "measured_mhz"].map(text));
        row.push(figure("instructions_rollout", ""));
        row.push(figure("ratio_1_thread_to_fastest_peer", "x"));
        row.push(figure("ratio_2_threads_to_fastest_peer", "x"));
        row
    });
    let prose = t.fill("history", &[("path", super::history::HISTORY_PATH)]);
    format!("\n{prose}\n\n{}", table(t.text("table_history"), rows))
}

/// The whole report: its pieces, each with the blank lines around it, joined
/// by newlines.
pub fn markdown(r: &Results) -> String {
    let t = &Template::parse(include_str!("report.md"));
    let mut p = vec!["# Benchmarks\n".to_string()];
    p.extend(r.quick.then(|| format!("{}\n", t.text("quick_banner"))));
    let quick_flag = if r.quick { " --quick" } else { "" };
    let intro = [("quick_flag", quick_flag), ("finished", &r.finished)];
    p.push(t.fill("intro", &intro) + "\n\n## Machine and versions\n");
    p.extend(r.machine.iter().map(|l| format!("- {l}")));
    let versions = r.versions.iter();
    let versions = versions.map(|(n, v)| vec![format!("`{n}`"), v.clone()]);
    p.push(format!("\n{}", table(t.text("table_versions"), versions)));
    p.push(format!("\n## Targets\n\n{}", targets(t, r)));
    p.extend(contended_otel(t, r).map(|c| format!("\n{c}")));
    p.extend(notes(t, r));
    p.push(section(t.text("record_path")));
    for (backend, doc) in [("prom", &r.record_prom), ("otel", &r.record_otel)] {
        p.extend(doc.error().map(not_measured).map(section));
        let tables = ["threads_1", "threads_2"].map(|threads| (threads, doc.rows(threads)));
        for (threads, rows) in tables.iter().filter(|(_, rows)| !rows.is_empty()) {
            p.push(t.text(&format!("heading_{backend}_{threads}")) + "\n");
            let ours = (backend == "prom").then_some(r);
            let peer = doc.fastest_peer(threads).map(|p| ("the fastest peer", p.1));
            let sdk = doc.median(threads, OTEL[2]).map(|s| ("the bare SDK", s));
            let to = if ours.is_some() { peer } else { sdk };
            let base = doc.median(threads, "empty");
            p.push(times(t, rows, base, to, ours) + "\n");
        }
    }

    let calls = [("calls", CALLS.to_string())];
    p.push(t.fill("off_means_free", &calls) + "\n");
    let counts = r.counts.iter().map(|c| {
        let empty = r.count(c.build, "empty").unwrap_or(0) as f64;
        let per_call = |n: f64| format!("{:.2}", n / CALLS as f64);
        let figures = c.instructions.as_ref().map(|&n| {
            let (all, net) = (per_call(n as f64), per_call(n as f64 - empty));
            vec![n.to_string(), all, net]
        });
        let figures = figures.unwrap_or_else(|e| vec![format!("not counted: {e}")]);
        [vec![c.build.to_string(), c.mode.into()], figures].concat()
    });
    p.push(table(t.text("table_counts"), counts));

    p.push(section(t.text("render")));
    p.extend(r.scrape.error().map(not_measured).map(section));
    let rows = r.scrape.rows("render");
    if !rows.is_empty() {
        let to = r.scrape.median("render", "prometheus-client");
        let to = to.map(|c| ("prometheus-client", c));
        p.push(times(t, &rows, None, to, None));
        let bytes = |k: &str| r.scrape.num(&format!("/render_bytes/{k}"));
        let renderers = [
            "gym-metrics-prom",
            "gym-metrics-prom OpenMetrics",
            "gym-metrics-prom protobuf",
            "prometheus",
            "prometheus-client",
        ];
        let sizes = renderers.map(|k| (k, dash(bytes(k), 0)));
        p.push(format!("\n{}", t.fill("render_sizes", &sizes)));
    }
    if r.scrape.at("/record_while_scraping").is_some() {
        let g = |k: &str| r.scrape.num(&format!("/record_while_scraping/{k}"));
        let interval = |k: &str| ci(g(&format!("{k}_low_ns")), g(&format!("{k}_high_ns")), 2);
        let values = [
            ("timed_scrapes", dash(g("scrapes_while_timed"), 0)),
            ("idle", dash(g("idle_median_ns"), 2)),
            ("idle_ci", interval("idle")),
            ("scraping", dash(g("scraping_median_ns"), 2)),
            ("scraping_ci", interval("scraping")),
            ("ratio", fmt_ratio(r.scrape_ratios().1)),
            ("scrapes", dash(g("scrapes"), 0)),
            ("inconsistent", dash(g("inconsistent_scrapes"), 0)),
        ];
        p.push(format!("\n{}", t.fill("while_scraping", &values)));
    }
    let args = [("args", super::wrk::ARGS.join(" "))];
    p.push(section(t.fill("wrk", &args)));
    let wrk = r.wrk.as_ref().map(|w| {
        let servers = ["gym-metrics-prom `/metrics`", "fixed body, hyper 1"];
        let rows = servers.iter().zip([&w.ours, &w.fixed]).map(|(name, x)| {
            let q = format!("{:.2}x", x.requests_per_sec / w.fixed.requests_per_sec);
            let (mean, p99) = (x.latency_avg.clone(), x.latency_p99.clone());
            let rps = format!("{:.0}", x.requests_per_sec);
            vec![name.to_string(), rps, mean, p99, q]
        });
        let body = t.fill("body", &[("bytes", w.body_bytes.to_string())]);
        format!("{}\n\n{body}", table(t.text("table_wrk"), rows))
    });
    p.push(wrk.unwrap_or_else(|e| not_measured(e)));
    let values = [("values", dash(r.quantiles.num("/values"), 0))];
    p.push(section(t.fill("quantiles", &values)));
    p.extend(r.quantiles.error().map(not_measured).map(section));
    if let Some(rows) = r.quantiles.at("/rows").and_then(|v| v.as_array()) {
        p.push(table(
            t.text("table_quantiles"),
            rows.iter().map(quantile_row),
        ));
    }

    p.push(section(t.text("otel_export")));
    p.extend(r.otel_export.error().map(not_measured).map(section));
    if r.otel_export.error().is_none() {
        let g = |k: &str, f: &str| r.otel_export.num(&format!("/export/{k}/{f}"));
        let pipelines = ["gym-metrics-otel", "opentelemetry_sdk"].map(|k| {
            let (exports, cpu) = (dash(g(k, "exports"), 0), dash(g(k, "cpu_us_per_export"), 1));
            let ci = ci(g(k, "cpu_low_us"), g(k, "cpu_high_us"), 1);
            let bytes = dash(g(k, "bytes_per_export"), 0);
            vec![k.into(), exports, cpu, ci, bytes]
        });
        p.push(table(t.text("table_otel_export"), pipelines));
        let q = |f: &str| fmt_ratio(ratio(g("gym-metrics-otel", f), g("opentelemetry_sdk", f)));
        let ratios = ["cpu_us_per_export", "bytes_per_export"].map(|f| (f, q(f)));
        p.push(format!("\n{}", t.fill("export_ratios", &ratios)));
    }

    p.push(section(t.text("http_layer")));
    p.extend(r.http_layer.error().map(not_measured).map(section));
    let rows = r.http_layer.rows("threads_1");
    if !rows.is_empty() {
        let (bare, _, peer_work) = r.http_work();
        let rows = rows.iter().map(|row| {
            let work = bare.zip(row.median_ns).map(|(b, m)| m - b);
            let q = fmt_ratio(ratio(work, peer_work));
            let q = if row.name.starts_with("bare") { "" } else { &q };
            let (median, ci) = (dash(row.median_ns, 0), ci(row.low_ns, row.high_ns, 0));
            vec![row.name.clone(), median, ci, dash(work, 0), q.into()]
        });
        p.push(table(t.text("table_http_layer"), rows));
    }
    let (args, rounds) = (http_wrk::ARGS.join(" "), http_wrk::ROUNDS.to_string());
    let values = [("args", args), ("rounds", rounds)];
    p.push(section(t.fill("http_wrk", &values)));
    let layer = r.http_wrk.as_ref().map(|rounds| {
        let bare = rounds.iter().find(|c| c.candidate == "bare");
        let bare = bare.and_then(Rounds::median);
        let rows = rounds.iter().map(|c| {
            let named = http_wrk::CANDIDATES.iter().find(|(k, _)| *k == c.candidate);
            let name = named.map_or(c.candidate, |(_, n)| n);
            let rps = c.requests_per_sec.iter().copied();
            let low = rps.clone().fold(f64::INFINITY, f64::min);
            let range = format!("{low:.0} – {:.0}", rps.fold(0.0, f64::max));
            let to_bare = fmt_ratio(ratio(c.median(), bare));
            let paired = fmt_ratio(paired_throughput_ratio(rounds, c.candidate));
            vec![name.into(), dash(c.median(), 0), range, to_bare, paired]
        });
        table(t.text("table_http_wrk"), rows)
    });
    p.push(layer.unwrap_or_else(|e| not_measured(e)));

    p.push(section(t.text("memory")));
    let scale = super::scale::benchmarks_section(r.scale.as_ref());
    p.push(format!("\n{}", scale.strip_suffix('\n').unwrap_or(&scale)));
    p.push(history(t, &r.history));
    let reproduce = t.fill("reproduce", &[("chart", CHART_PATH)]);
    p.push(format!("\n{reproduce}"));
    p.join("\n") + "\n"
}

#[cfg(test)]
mod tests;
