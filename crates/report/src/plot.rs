//! Grouped bar charts, as PNG and SVG, shaped like the papers' figures: groups along x (say
//! datasets or workloads), one coloured bar per series (say schemes) in each group.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

/// One chart: `series[i].1[g]` is series i's value in group g; NaN leaves a gap.
pub struct BarChart<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    pub groups: &'a [String],
    pub series: &'a [(String, Vec<f64>)],
}

/// Colours in the order of the series (a colour-blind-safe palette, Okabe-Ito).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(240, 228, 66),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
];

const SIZE: (u32, u32) = (900, 480);

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // PNG text needs a font; the embedded DejaVu Sans keeps the output the same everywhere.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// A chart that draws on any backend.
trait Draw {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>;
}

/// Draw `chart` into `<stem>.png` and `<stem>.svg`.
fn write_both(chart: &impl Draw, stem: &Path) -> Result<(), String> {
    register_font();
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        chart
            .draw(&root)
            .map_err(|e| format!("{}: {e}", png.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", png.display()))?;
    }
    let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
    chart
        .draw(&root)
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    root.present()
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    Ok(())
}

impl BarChart<'_> {
    /// Write `<stem>.png` and `<stem>.svg`.
    pub fn write(&self, stem: &Path) -> Result<(), String> {
        write_both(self, stem)
    }
}

impl Draw for BarChart<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let top = self
            .series
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|x| x.is_finite())
            .fold(0.0f64, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let n_groups = self.groups.len().max(1);
        let groups = self.groups.to_vec();
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(65)
            .build_cartesian_2d(0f64..n_groups as f64, 0f64..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(self.y_label)
            .x_labels(n_groups * 2 + 1)
            .x_label_formatter(&|x| {
                // Labels at group centres only.
                let g = x - 0.5;
                if (g - g.round()).abs() < 1e-6 && g >= 0.0 {
                    groups.get(g.round() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .label_style(("sans-serif", 14))
            .draw()?;
        let k = self.series.len().max(1) as f64;
        let width = 0.8 / k;
        for (i, (name, values)) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(
                    values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_finite())
                        .map(|(g, &v)| {
                            let x0 = g as f64 + 0.1 + i as f64 * width;
                            Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], colour.filled())
                        }),
                )?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    }
}

/// A line chart of series over x (time series: ZenFS+'s bandwidth per second, latency per
/// 100 ms); `log_y` for latencies spanning orders of magnitude.
pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: &'a [(String, Vec<(f64, f64)>)],
    pub log_y: bool,
}

impl LineChart<'_> {
    /// Write `<stem>.png` and `<stem>.svg`.
    pub fn write(&self, stem: &Path) -> Result<(), String> {
        write_both(self, stem)
    }
}

impl Draw for LineChart<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let points = || {
            self.series
                .iter()
                .flat_map(|(_, v)| v.iter().copied())
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_y || *y > 0.0))
        };
        let x_max = points().map(|p| p.0).fold(0.0f64, f64::max).max(1e-9);
        let y_max = points().map(|p| p.1).fold(0.0f64, f64::max);
        let mut builder = ChartBuilder::on(root);
        builder
            .caption(self.title, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(65);
        if self.log_y {
            let y_min = points().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let y_min = if y_min.is_finite() { y_min / 2.0 } else { 0.1 };
            let top = (y_max * 2.0).max(y_min * 10.0);
            let mut chart = builder.build_cartesian_2d(0f64..x_max, (y_min..top).log_scale())?;
            chart
                .configure_mesh()
                .x_desc(self.x_label)
                .y_desc(self.y_label)
                .label_style(("sans-serif", 14))
                .draw()?;
            for (i, (name, v)) in self.series.iter().enumerate() {
                let colour = PALETTE[i % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(
                        v.iter().copied().filter(|p| p.1 > 0.0 && p.1.is_finite()),
                        colour.stroke_width(2),
                    ))?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], colour));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()?;
        } else {
            let top = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
            let mut chart = builder.build_cartesian_2d(0f64..x_max, 0f64..top)?;
            chart
                .configure_mesh()
                .x_desc(self.x_label)
                .y_desc(self.y_label)
                .label_style(("sans-serif", 14))
                .draw()?;
            for (i, (name, v)) in self.series.iter().enumerate() {
                let colour = PALETTE[i % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(
                        v.iter().copied().filter(|p| p.1.is_finite()),
                        colour.stroke_width(2),
                    ))?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], colour));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_charts_write_png_and_svg_linear_and_log() {
        let dir = std::env::temp_dir().join(format!("znslab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let series = vec![
            ("a".to_string(), vec![(0.0, 1.0), (1.0, 300.0), (2.0, 20.0)]),
            ("b".to_string(), vec![(0.0, 5.0), (2.0, 0.0)]),
        ];
        for log_y in [false, true] {
            let stem = dir.join(format!("line-{log_y}"));
            LineChart {
                title: "t",
                x_label: "s",
                y_label: "us",
                series: &series,
                log_y,
            }
            .write(&stem)
            .expect("writes");
            assert!(std::fs::metadata(stem.with_extension("png")).unwrap().len() > 1000);
            let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
            assert!(svg.contains("<svg"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
