//! SVG plots (plotters' SVG backend: `<text>` elements, no font stack or system library), each with axes
//! fitted to its data ([`crate::axis`]), a legend beside the plot (never over the data) and the run's stamp
//! at the bottom.

use crate::axis::{Axis, Unit};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
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

/// The legend panel's width, right of the plot.
const LEGEND_WIDTH: u32 = 290;

/// An axis in plot space with exactly the ticks of an [`Axis`] (plotters' own `f64` axis chooses its ticks
/// itself, and its key-point wrapper takes no label formatter).
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn of(axis: &Axis, hi: f64) -> Self {
        Self {
            lo: axis.range.0,
            hi,
            ticks: axis.ticks.clone(),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let share = (value - self.lo) / (self.hi - self.lo);
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Bold mesh lines and labels at the ticks; no light lines between them.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// One line of a line chart: its legend and its `(x, y)` points.
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// The points, x ascending, in the axes' base units.
    pub points: Vec<(f64, f64)>,
    /// Dashed (for a second family of lines, e.g. all cores vs one thread).
    pub dashed: bool,
}

/// A line chart: x at the measured sizes, y fitted to the data.
pub struct LineChart<'a> {
    /// The title.
    pub title: &'a str,
    /// The x axis' quantity and unit (its values in the unit's base).
    pub x: (&'a str, Unit),
    /// The y axis' quantity and unit.
    pub y: (&'a str, Unit),
    /// The lines.
    pub series: Vec<Series>,
}

/// Errors of the plotting backend, as text.
type PlotResult = Result<(), String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot: {e:?}")
}

/// The plot area and the legend panel, after writing the stamp below both.
type Areas<'a> = (DrawingArea<SVGBackend<'a>, Shift>, DrawingArea<SVGBackend<'a>, Shift>);

fn framed<'a>(root: &DrawingArea<SVGBackend<'a>, Shift>, stamp: &str) -> Result<Areas<'a>, String> {
    root.fill(&WHITE).map_err(err)?;
    let (width, height) = root.dim_in_pixel();
    let (main, footer) = root.split_vertically(height - 24);
    footer
        .draw(&Text::new(
            stamp.to_string(),
            (8, 4),
            ("sans-serif", 14).into_font().color(&RGBColor(90, 90, 90)),
        ))
        .map_err(err)?;
    Ok(main.split_horizontally(width - LEGEND_WIDTH))
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Swatch {
    /// A line (dashed or not) with a point marker.
    Line { dashed: bool },
    /// A filled box (bar charts).
    Box,
}

/// The legend: one entry per `(name, colour, swatch)`, from the top of the panel.
fn legend(panel: &DrawingArea<SVGBackend<'_>, Shift>, entries: &[(String, RGBColor, Swatch)]) -> PlotResult {
    let font = ("sans-serif", 13).into_font();
    for (i, (name, colour, swatch)) in entries.iter().enumerate() {
        let y = 48 + 22 * i as i32;
        match swatch {
            Swatch::Line { dashed: true } => {
                for x in [6, 20] {
                    panel
                        .draw(&PathElement::new(vec![(x, y), (x + 9, y)], colour.stroke_width(2)))
                        .map_err(err)?;
                }
            }
            Swatch::Line { dashed: false } => {
                panel
                    .draw(&PathElement::new(vec![(6, y), (30, y)], colour.stroke_width(2)))
                    .map_err(err)?;
            }
            Swatch::Box => {
                panel
                    .draw(&Rectangle::new([(10, y - 6), (26, y + 6)], colour.filled()))
                    .map_err(err)?;
            }
        }
        if let Swatch::Line { .. } = swatch {
            panel.draw(&Circle::new((18, y), 3, colour.filled())).map_err(err)?;
        }
        panel
            .draw(&Text::new(name.clone(), (38, y - 7), font.clone()))
            .map_err(err)?;
    }
    Ok(())
}

impl LineChart<'_> {
    /// Writes the chart to `path` as SVG, `stamp` at the bottom.
    pub fn write(&self, path: &Path, stamp: &str) -> PlotResult {
        let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
        let (main, panel) = framed(&root, stamp)?;
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let xs: Vec<f64> = all().map(|p| p.0).collect();
        let ys: Vec<f64> = all().map(|p| p.1).collect();
        let x = Axis::measured(self.x.0, self.x.1, &xs);
        let y = Axis::values(self.y.0, self.y.1, &ys);
        let mut chart = ChartBuilder::on(&main)
            .caption(self.title, ("sans-serif", 19))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(Ticked::of(&x, x.range.1), Ticked::of(&y, y.range.1))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x.label.as_str())
            .y_desc(y.label.as_str())
            .x_label_formatter(&|v| x.tick_label(*v))
            .y_label_formatter(&|v| y.tick_label(*v))
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let mut entries = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|&(px, py)| Some((x.to_plot(px)?, y.to_plot(py)?)))
                .collect();
            let style = colour.stroke_width(2);
            let drawn = if s.dashed {
                chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))
            } else {
                chart.draw_series(LineSeries::new(points.clone(), style))
            };
            drawn.map_err(err)?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(err)?;
            entries.push((s.name.clone(), colour, Swatch::Line { dashed: s.dashed }));
        }
        legend(&panel, &entries)?;
        root.present().map_err(err)
    }
}

/// A horizontal bar chart: one bar per row, grouped by colour, the value axis fitted to the data.
pub struct BarChart<'a> {
    /// The title.
    pub title: &'a str,
    /// The value axis' quantity and unit (the values in the unit's base).
    pub value: (&'a str, Unit),
    /// The rows: group (legend and colour), label, value.
    pub bars: Vec<(String, String, f64)>,
}

impl BarChart<'_> {
    /// Writes the chart to `path` as SVG, `stamp` at the bottom.
    pub fn write(&self, path: &Path, stamp: &str) -> PlotResult {
        let rows = self.bars.len().max(1);
        let height = (130 + 34 * rows) as u32;
        let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
        let (main, panel) = framed(&root, stamp)?;
        let values: Vec<f64> = self.bars.iter().map(|b| b.2).collect();
        let x = Axis::values(self.value.0, self.value.1, &values);
        // Room right of the longest bar for its value.
        let right = x.range.1 + 0.12 * (x.range.1 - x.range.0);
        let labels: Vec<String> = self.bars.iter().map(|b| b.1.clone()).collect();
        let mut chart = ChartBuilder::on(&main)
            .caption(self.title, ("sans-serif", 19))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(330)
            .build_cartesian_2d(
                Ticked::of(&x, right),
                (0..rows.saturating_sub(1).max(1)).into_segmented(),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(x.label.as_str())
            .x_label_formatter(&|v| x.tick_label(*v))
            .y_labels(rows)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).map(|l| fit(l)).unwrap_or_default(),
                SegmentValue::Exact(_) | SegmentValue::Last => String::new(),
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
        let mut entries = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let colour = COLOURS[g % COLOURS.len()];
            let shown: Vec<(usize, f64, f64)> = self
                .bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.0 == *group)
                .filter_map(|(i, b)| Some((i, x.to_plot(b.2)?, b.2)))
                .collect();
            chart
                .draw_series(shown.iter().map(|&(i, end, _)| {
                    let mut r = Rectangle::new(
                        [(x.base(), SegmentValue::Exact(i)), (end, SegmentValue::Exact(i + 1))],
                        colour.filled(),
                    );
                    r.set_margin(4, 4, 0, 0);
                    r
                }))
                .map_err(err)?;
            chart
                .draw_series(shown.iter().map(|&(i, end, v)| {
                    Text::new(
                        format!(" {}", self.value.1.text(v)),
                        (end, SegmentValue::CenterOf(i)),
                        ("sans-serif", 12).into_font(),
                    )
                }))
                .map_err(err)?;
            entries.push(((*group).to_string(), colour, Swatch::Box));
        }
        legend(&panel, &entries)?;
        root.present().map_err(err)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The text lines of an SVG (plotters writes each `<text>`'s content on a line of its own).
    fn texts(svg: &str) -> Vec<String> {
        svg.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('<'))
            .map(String::from)
            .collect()
    }

    fn written(name: &str, write: impl FnOnce(&Path) -> PlotResult) -> Vec<String> {
        let dir = std::env::temp_dir().join(format!("results-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        write(&path).expect("the plot is drawn");
        let svg = std::fs::read_to_string(&path).expect("the plot is written");
        let _ = std::fs::remove_file(&path);
        texts(&svg)
    }

    /// Table 1 from the committed page's figures (ours, tfhe-rs, the paper's): ticks at 256 to 8192 bits,
    /// the time axis from 10 µs to 100 s with its unit on each tick, the legend, the stamp.
    #[test]
    fn table1_is_drawn_with_fitted_axes() {
        let bits = [256.0, 1024.0, 4096.0, 8192.0];
        let line = |name: &str, ms: [f64; 4], dashed: bool| Series {
            name: name.into(),
            points: bits.iter().zip(ms).map(|(b, t)| (*b, t * 1e-3)).collect(),
            dashed,
        };
        let chart = LineChart {
            title: "Table 1: encryption time vs plaintext size",
            x: ("plaintext size", Unit::Bits),
            y: ("encryption time", Unit::Seconds),
            series: vec![
                line("TLWE per bit (tfhe-rs)", [3.204, 12.856, 51.687, 102.299], false),
                line("ours, secret key", [0.01137, 0.01136, 0.03394, 0.06372], false),
                line(
                    "paper: TLWE (TFHEpp, Pi Zero 2 W)",
                    [1922.6, 7705.6, 30781.2, 61587.5],
                    true,
                ),
            ],
        };
        let text = written("table1.svg", |p| chart.write(p, "stamp · commit 0123456789 · 2 cores"));
        for want in [
            "256",
            "1024",
            "4096",
            "8192",
            "10 µs",
            "1 ms",
            "100 s",
            "plaintext size [bits] (log scale)",
            "encryption time (log scale)",
            "ours, secret key",
            "paper: TLWE (TFHEpp, Pi Zero 2 W)",
            "stamp · commit 0123456789 · 2 cores",
        ] {
            assert!(text.iter().any(|t| t == want), "{want} in {text:?}");
        }
        assert!(
            !text
                .iter()
                .any(|t| t.ends_with('k') || t.ends_with('M') || t == "1000 s"),
            "{text:?}"
        );
    }

    /// A bar chart of data within a decade: a linear axis from zero in µs, each bar's value in its unit.
    #[test]
    fn narrow_bars_are_linear_in_their_unit() {
        let chart = BarChart {
            title: "Table 6: CSPRNG, time per 64 KiB",
            value: ("time per call", Unit::Seconds),
            bars: vec![
                ("ours".into(), "BLAKE2b XOF (ours)".into(), 35.9e-6),
                ("peers".into(), "/dev/urandom".into(), 174e-6),
            ],
        };
        let text = written("bars.svg", |p| chart.write(p, "stamp"));
        for want in [
            "time per call [µs]",
            "0",
            "50",
            "100",
            "150",
            "35.9 µs",
            "174 µs",
            "ours",
            "peers",
        ] {
            assert!(text.iter().any(|t| t == want), "{want} in {text:?}");
        }
    }
}
