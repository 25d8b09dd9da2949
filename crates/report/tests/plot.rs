//! Bar charts land as a real PNG and an SVG that names the title and every series.

use report::plot::BarChart;

#[test]
fn a_bar_chart_writes_png_and_svg() {
    let dir = std::env::temp_dir().join(format!("znslab-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let groups = vec!["amazon".to_string(), "reddit".to_string()];
    let series = vec![
        ("NO".to_string(), vec![1.0, 2.0]),
        ("CC".to_string(), vec![0.5, f64::NAN]),
    ];
    BarChart {
        title: "Fig. 8 — write volume",
        y_label: "GB",
        groups: &groups,
        series: &series,
    }
    .write(&dir.join("fig8"))
    .expect("writes");
    let png = std::fs::read(dir.join("fig8.png")).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 5_000, "a drawn chart, {} bytes", png.len());
    let svg = std::fs::read_to_string(dir.join("fig8.svg")).expect("svg");
    for text in ["Fig. 8", "NO", "CC", "amazon", "reddit", "GB"] {
        assert!(svg.contains(text), "svg names {text}");
    }
    // A folder that does not exist is an error naming the file, not a panic.
    let err = BarChart {
        title: "t",
        y_label: "y",
        groups: &groups,
        series: &series,
    }
    .write(&dir.join("missing/fig"))
    .expect_err("no folder");
    assert!(err.contains("missing/fig"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
