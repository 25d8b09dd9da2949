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

impl BarChart<'_> {
    /// Write `<stem>.png` and `<stem>.svg`.
    pub fn write(&self, stem: &Path) -> Result<(), String> {
        register_font();
        let png = stem.with_extension("png");
        let svg = stem.with_extension("svg");
        {
            let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
            self.draw(&root)
                .map_err(|e| format!("{}: {e}", png.display()))?;
            root.present()
                .map_err(|e| format!("{}: {e}", png.display()))?;
        }
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        self.draw(&root)
            .map_err(|e| format!("{}: {e}", svg.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", svg.display()))?;
        Ok(())
    }

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
