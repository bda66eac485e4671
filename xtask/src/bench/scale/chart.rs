//! The fleet-scale chart: each measured cost per process, relative to the
//! smallest fleet, against the fleet size (log scale). A line at or below 1
//! grows linearly or better in total; a line above it, faster than linear.

use plotters::prelude::*;

use super::figures::ScaleRun;
use super::section::{growth_lines, Line};

const WIDTH: u32 = 1080;
const HEIGHT: u32 = 620;
const COLOURS: [RGBColor; 10] = [
    RGBColor(0x48, 0x78, 0xd0),
    RGBColor(0xee, 0x85, 0x4a),
    RGBColor(0x6a, 0xcc, 0x64),
    RGBColor(0xd6, 0x5f, 0x5f),
    RGBColor(0x95, 0x6c, 0xb4),
    RGBColor(0x8c, 0x61, 0x3c),
    RGBColor(0xdc, 0x7e, 0xc0),
    RGBColor(0x79, 0x79, 0x79),
    RGBColor(0xd5, 0xbb, 0x67),
    RGBColor(0x82, 0xc6, 0xe2),
];

/// The chart as an SVG document.
///
/// # Errors
/// Drawing failed.
pub fn chart(run: &ScaleRun) -> Result<String, String> {
    let lines: Vec<Line> = growth_lines(run);
    let sizes: Vec<f64> = run.sizes.iter().map(|s| s.processes as f64).collect();
    let (x0, x1) = (
        sizes.first().copied().unwrap_or(1.0).max(1.0),
        sizes.last().copied().unwrap_or(10.0).max(2.0),
    );
    let top = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(2.0f64, f64::max)
        .min(20.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let err = |e: DrawingAreaErrorKind<_>| format!("drawing the scale chart: {e}");
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Fleet scale: cost per process relative to the smallest fleet",
                ("sans-serif", 22),
            )
            .margin(20)
            .x_label_area_size(46)
            .y_label_area_size(60)
            .build_cartesian_2d((x0 * 0.9..x1 * 1.1).log_scale(), 0f64..top * 1.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("processes in the fleet (log scale)")
            .y_desc("per process, relative to the smallest fleet")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                [(x0 * 0.9, 1.0), (x1 * 1.1, 1.0)],
                BLACK.stroke_width(1),
            ))
            .map_err(err)?
            .label("linear in total")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK));
        for (i, line) in lines.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<(f64, f64)> = line
                .points
                .iter()
                .copied()
                .filter(|p| p.1.is_finite())
                .map(|(x, y)| (x, y.min(top * 1.1)))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                .map_err(err)?
                .label(line.name)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
