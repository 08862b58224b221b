//! SVG plots (plotters' SVG backend: `<text>` elements, no font stack or system library), each with axes,
//! units, a legend and the run's stamp at the bottom.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// The series colours, in order.
const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// One line of a line chart: its legend and its `(x, y)` points.
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// The points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Dashed (for a second family of lines, e.g. all cores vs one thread).
    pub dashed: bool,
}

/// A line chart on log-log axes.
pub struct LineChart<'a> {
    /// The title.
    pub title: &'a str,
    /// The x axis' label, with its unit.
    pub x_label: &'a str,
    /// The y axis' label, with its unit.
    pub y_label: &'a str,
    /// The lines.
    pub series: Vec<Series>,
}

/// Errors of the plotting backend, as text.
type PlotResult = Result<(), String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot: {e:?}")
}

/// The drawing area above the stamp line, after writing the stamp.
fn framed<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    stamp: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, String> {
    root.fill(&WHITE).map_err(err)?;
    let (_, height) = root.dim_in_pixel();
    let (main, footer) = root.split_vertically(height - 24);
    footer
        .draw(&Text::new(
            stamp.to_string(),
            (8, 4),
            ("sans-serif", 14).into_font().color(&RGBColor(90, 90, 90)),
        ))
        .map_err(err)?;
    Ok(main)
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo.is_finite() {
        (lo / 1.4, hi * 1.4)
    } else {
        (0.1, 10.0)
    }
}

impl LineChart<'_> {
    /// Writes the chart to `path` as SVG, `stamp` at the bottom.
    pub fn write(&self, path: &Path, stamp: &str) -> PlotResult {
        let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
        let main = framed(&root, stamp)?;
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = bounds(all().map(|p| p.0));
        let (y0, y1) = bounds(all().map(|p| p.1));
        // Head room above the data for the legend: a share of the (log) height that grows with the entries.
        let share = (0.04 + 0.04 * self.series.len() as f64).min(0.6);
        let y1 = (y0.ln() + (y1.ln() - y0.ln()) / (1.0 - share)).exp();
        let mut chart = ChartBuilder::on(&main)
            .caption(self.title, ("sans-serif", 19))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .x_labels(12)
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| *x > 0.0 && *y > 0.0 && y.is_finite())
                .collect();
            let style = colour.stroke_width(2);
            let drawn = if s.dashed {
                chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))
            } else {
                chart.draw_series(LineSeries::new(points.clone(), style))
            };
            drawn
                .map_err(err)?
                .label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], colour.stroke_width(2)));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(err)
    }
}

/// A horizontal bar chart on a log axis: one bar per row, grouped by colour.
pub struct BarChart<'a> {
    /// The title.
    pub title: &'a str,
    /// The value axis' label, with its unit.
    pub x_label: &'a str,
    /// The rows: group (legend and colour), label, value.
    pub bars: Vec<(String, String, f64)>,
}

impl BarChart<'_> {
    /// Writes the chart to `path` as SVG, `stamp` at the bottom.
    pub fn write(&self, path: &Path, stamp: &str) -> PlotResult {
        let rows = self.bars.len().max(1);
        let height = (130 + 34 * rows) as u32;
        let root = SVGBackend::new(path, (960, height)).into_drawing_area();
        let main = framed(&root, stamp)?;
        let (x0, x1) = bounds(self.bars.iter().map(|b| b.2));
        let labels: Vec<String> = self.bars.iter().map(|b| b.1.clone()).collect();
        let mut chart = ChartBuilder::on(&main)
            .caption(self.title, ("sans-serif", 19))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(330)
            .build_cartesian_2d(
                (x0..x1 * 2.0).log_scale(),
                (0..rows.saturating_sub(1).max(1)).into_segmented(),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(self.x_label)
            .x_labels(12)
            .x_label_formatter(&|v| tick(*v))
            .y_labels(rows)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).map(|l| fit(l)).unwrap_or_default(),
                _ => String::new(),
            })
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let mut groups: Vec<&str> = Vec::new();
        for b in &self.bars {
            if !groups.contains(&b.0.as_str()) {
                groups.push(&b.0);
            }
        }
        for (g, group) in groups.iter().enumerate() {
            let colour = COLOURS[g % COLOURS.len()];
            let rects: Vec<_> = self
                .bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.0 == *group && b.2.is_finite() && b.2 > 0.0)
                .map(|(i, b)| {
                    let mut r = Rectangle::new(
                        [(x0, SegmentValue::Exact(i)), (b.2, SegmentValue::Exact(i + 1))],
                        colour.filled(),
                    );
                    r.set_margin(4, 4, 0, 0);
                    r
                })
                .collect();
            chart
                .draw_series(rects)
                .map_err(err)?
                .label(*group)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
            chart
                .draw_series(
                    self.bars
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| b.0 == *group && b.2 > 0.0)
                        .map(|(i, b)| {
                            Text::new(
                                format!(" {}", short(b.2)),
                                (b.2, SegmentValue::CenterOf(i)),
                                ("sans-serif", 12).into_font(),
                            )
                        }),
                )
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)
    }
}

/// The legend of `chart`'s labelled series, boxed, at `position`.
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(err)
}

/// A log axis' tick label: only at 1, 2 and 5 times a power of ten (the others stay blank, so that labels
/// near the end of a decade do not run into each other).
fn tick(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        return String::new();
    }
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 0.02 * m) {
        short(v)
    } else {
        String::new()
    }
}

/// A bar's label, cut at its first parenthesis when too long for the label area.
fn fit(label: &str) -> String {
    const MAX: usize = 48;
    if label.chars().count() <= MAX {
        return label.to_string();
    }
    let head = label.split(" (").next().unwrap_or(label);
    if head.chars().count() <= MAX {
        head.to_string()
    } else {
        format!("{}…", head.chars().take(MAX - 1).collect::<String>())
    }
}

/// A number with three significant digits and an SI suffix (k, M, G; m, µ, n).
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else if a >= 1.0 || a == 0.0 {
        (v, "")
    } else if a >= 1e-3 {
        (v * 1e3, "m")
    } else if a >= 1e-6 {
        (v * 1e6, "µ")
    } else {
        (v * 1e9, "n")
    };
    let digits = if scaled.abs() >= 100.0 {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    if suffix == "m" || suffix == "µ" || suffix == "n" {
        // Below 1: plain decimals with three significant digits (an SI prefix would read as a unit prefix).
        let digits = (2.0 - a.log10().floor()).max(0.0) as usize;
        return format!("{v:.digits$}");
    }
    format!("{scaled:.digits$}{suffix}")
}
