//! The record-path chart: per candidate, one horizontal bar for 1 thread
//! and one for 2 threads, criterion's median ns per call on a log scale,
//! drawn with `plotters` into an SVG (text as SVG `<text>`, so no font
//! library is needed).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::figures::Row;

/// A candidate and its medians.
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
                r.median_ns,
                two.iter()
                    .find(|t| t.name == r.name)
                    .and_then(|t| t.median_ns),
            ],
        })
        .collect()
}

const WIDTH: u32 = 1080;
/// Room for the candidates' names, left of the bars.
const LABELS: u32 = 480;
const PER_GROUP: u32 = 36;
const SERIES: [(RGBColor, &str); 2] = [
    (RGBColor(0x48, 0x78, 0xd0), "1 thread"),
    (RGBColor(0xee, 0x85, 0x4a), "2 threads, same instrument"),
];
/// The smallest value on the axis; smaller medians are drawn at it.
const FLOOR: f64 = 0.1;

/// The chart as an SVG document; a note when no row has figures (quick mode).
pub fn chart(title: &str, groups: &[Group]) -> Result<String, String> {
    let n = groups.len().max(1);
    let height = 70 + PER_GROUP * n as u32 + 110;
    let max = groups
        .iter()
        .flat_map(|g| g.medians.iter().flatten())
        .fold(1.0f64, |m, &v| m.max(v));
    // A decade of room right of the longest bar for its figure.
    let upper = 10f64.powf((max * 3.0).log10().ceil());
    let measured = groups.iter().any(|g| g.medians.iter().any(Option::is_some));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let err = |e: DrawingAreaErrorKind<_>| format!("drawing the chart: {e}");
        root.fill(&WHITE).map_err(err)?;
        root.draw(&Text::new(
            title.to_string(),
            (10, 12),
            ("sans-serif", 22).into_font().style(FontStyle::Bold),
        ))
        .map_err(err)?;
        for (k, (colour, label)) in SERIES.iter().enumerate() {
            let x = LABELS as i32 + 230 * k as i32;
            root.draw(&Rectangle::new([(x, 42), (x + 12, 52)], colour.filled()))
                .map_err(err)?;
            root.draw(&Text::new(
                label.to_string(),
                (x + 18, 40),
                ("sans-serif", 16).into_font(),
            ))
            .map_err(err)?;
        }
        let mut chart = ChartBuilder::on(&root)
            .margin_top(70)
            .margin_right(30)
            .margin_bottom(40)
            .x_label_area_size(46)
            .y_label_area_size(LABELS)
            .build_cartesian_2d((FLOOR..upper).log_scale(), 0f64..n as f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("median ns per call (criterion), log scale")
            .x_label_formatter(&|v| {
                if *v < 1.0 {
                    format!("{v}")
                } else {
                    format!("{v:.0}")
                }
            })
            .label_style(("sans-serif", 16))
            .draw()
            .map_err(err)?;
        // Candidate i (from the top) spans y in [n-1-i, n-i): a bar per
        // series, the figure right of it.
        let bar = |i: usize, k: usize| {
            let top = (n - i) as f64 - 0.14 - 0.36 * k as f64;
            (top - 0.34, top)
        };
        for (k, (colour, _)) in SERIES.iter().enumerate() {
            chart
                .draw_series(groups.iter().enumerate().filter_map(|(i, g)| {
                    let v = g.medians[k]?;
                    let (low, high) = bar(i, k);
                    Some(Rectangle::new(
                        [(FLOOR, low), (v.max(FLOOR), high)],
                        colour.filled(),
                    ))
                }))
                .map_err(err)?;
            chart
                .draw_series(groups.iter().enumerate().filter_map(|(i, g)| {
                    let v = g.medians[k]?;
                    let (low, high) = bar(i, k);
                    Some(Text::new(
                        format!("{v:.1}"),
                        (v.max(FLOOR) * 1.12, (low + high) / 2.0),
                        ("sans-serif", 15)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                }))
                .map_err(err)?;
        }
        for (i, g) in groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(FLOOR, (n - i) as f64 - 0.5));
            root.draw(&Text::new(
                g.label.clone(),
                (x - 8, y),
                ("sans-serif", 16)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(err)?;
        }
        let note = if measured {
            "gym-metrics-otel rows: their own process (the facade installs once), beside the bare SDK there; see BENCHMARKS.md."
        } else {
            "Quick mode: nothing was timed, so there are no bars."
        };
        root.draw(&Text::new(
            note.to_string(),
            (10, height as i32 - 24),
            ("sans-serif", 15)
                .into_font()
                .color(&RGBColor(0x55, 0x55, 0x55)),
        ))
        .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, median: Option<f64>) -> Row {
        Row {
            name: name.into(),
            median_ns: median,
            low_ns: median.map(|m| m * 0.9),
            high_ns: median.map(|m| m * 1.1),
        }
    }

    #[test]
    fn every_candidate_and_figure_is_in_the_chart() {
        let one = [
            row("empty loop", Some(0.31)),
            row(
                "gym-metrics-prom PrometheusRecorder direct, rollout (f64 ms)",
                Some(4.2),
            ),
            row(
                "metrics 0.24 (exporter-prometheus) Histogram::record",
                Some(61.0),
            ),
        ];
        let two = [
            row("empty loop", Some(0.35)),
            row(
                "metrics 0.24 (exporter-prometheus) Histogram::record",
                Some(480.5),
            ),
        ];
        let svg = chart("Record path", &groups(&one, &two)).expect("the chart draws");
        if let Some(path) = std::env::var_os("GYM_CHART_SAMPLE") {
            std::fs::write(path, &svg).expect("writing the sample chart");
        }
        for text in [
            "Record path",
            "empty loop",
            "gym-metrics-prom PrometheusRecorder direct, rollout (f64 ms)",
            "metrics 0.24 (exporter-prometheus) Histogram::record",
            "\n0.3\n",
            "\n4.2\n",
            "\n480.5\n",
            "2 threads, same instrument",
        ] {
            assert!(svg.contains(text), "{text} missing from {svg}");
        }
    }

    #[test]
    fn quick_mode_draws_no_bars_but_says_why() {
        let svg = chart("Record path", &groups(&[row("empty loop", None)], &[]))
            .expect("the chart draws");
        assert!(svg.contains("Quick mode"), "{svg}");
    }
}
