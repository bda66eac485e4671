//! The record-path chart: one horizontal bar per candidate and thread
//! count, median ns per call on a log scale, written as plain SVG (no
//! plotting dependency for one bar chart).

use std::fmt::Write as _;

use super::figures::Row;

/// A group of bars: a label and its `(series, row)` values.
pub struct Group {
    /// The candidate.
    pub label: String,
    /// `(1 thread, 2 threads)` medians, ns.
    pub medians: [Option<f64>; 2],
}

/// Groups `threads_1` and `threads_2` rows by candidate name, in order.
pub fn groups(one: &[Row], two: &[Row]) -> Vec<Group> {
    one.iter()
        .map(|r| Group {
            label: r.name.clone(),
            medians: [
                Some(r.median_ns),
                two.iter().find(|t| t.name == r.name).map(|t| t.median_ns),
            ],
        })
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart as an SVG document.
pub fn chart(title: &str, groups: &[Group]) -> String {
    const LEFT: f64 = 440.0;
    const WIDTH: f64 = 980.0;
    const BAR: f64 = 12.0;
    const GROUP: f64 = 34.0;
    const TOP: f64 = 60.0;
    let plot = WIDTH - LEFT - 70.0;
    let max = groups
        .iter()
        .flat_map(|g| g.medians.iter().flatten())
        .fold(1.0f64, |m, &v| m.max(v));
    let decades = max.log10().ceil().max(1.0);
    let x = |ns: f64| LEFT + plot * (ns.max(0.1).log10() + 1.0) / (decades + 1.0);
    let height = TOP + GROUP * groups.len() as f64 + 58.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="22" font-size="15" font-weight="bold">{}</text>"#,
        escape(title)
    );
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="32" width="12" height="10" fill="#4878d0"/><text x="{}" y="41">1 thread</text><rect x="{}" y="32" width="12" height="10" fill="#ee854a"/><text x="{}" y="41">2 threads, same instrument</text><text x="{}" y="41" fill="#555">median ns per call, log scale</text>"##,
        LEFT + 16.0,
        LEFT + 90.0,
        LEFT + 106.0,
        LEFT + 300.0
    );
    for d in -1..=decades as i32 {
        let ns = 10f64.powi(d);
        let gx = x(ns);
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{TOP}" x2="{gx:.1}" y2="{:.1}" stroke="#ddd"/><text x="{gx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
            height - 30.0,
            height - 16.0,
            if ns < 1.0 {
                format!("{ns}")
            } else {
                format!("{ns:.0}")
            }
        );
    }
    for (i, g) in groups.iter().enumerate() {
        let y = TOP + GROUP * i as f64 + 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 8.0,
            y + BAR + 4.0,
            escape(&g.label)
        );
        for (k, (value, colour)) in g.medians.iter().zip(["#4878d0", "#ee854a"]).enumerate() {
            let Some(v) = value else { continue };
            let by = y + k as f64 * (BAR + 1.0);
            let _ = writeln!(
                s,
                r#"<rect x="{LEFT}" y="{by:.1}" width="{:.1}" height="{BAR}" fill="{colour}"/><text x="{:.1}" y="{:.1}" font-size="11">{v:.1}</text>"#,
                (x(*v) - LEFT).max(1.0),
                x(*v) + 4.0,
                by + BAR - 2.0
            );
        }
    }
    let _ = writeln!(
        s,
        r##"<text x="10" y="{:.1}" font-size="11" fill="#555">gym-metrics-otel rows: their own process (the facade installs once), beside the bare SDK there; see BENCHMARKS.md.</text>"##,
        height - 4.0
    );
    s.push_str("</svg>\n");
    s
}
