//! `znslab reproduce zenfsplus` end to end at a tiny scale: every run, the report with its
//! checks, the CSVs and charts, and the report again from the runs' JSON.

mod common;

use common::{text, znslab, TempDir};

#[test]
fn reproduce_zenfsplus_runs_its_list_and_writes_the_report() {
    let dir = TempDir::new("zenfsplus-reproduce");
    let out = dir.path("r");
    let o = znslab(&[
        "reproduce",
        "zenfsplus",
        "--scale",
        "0.002",
        "--jobs",
        "1",
        "--output",
        &out,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report = text(&o.stdout);
    // Both probes find the preset's 32 groups.
    assert!(
        report.contains("| §IV-B | IZGs the write probe finds | 32 | 32 | pass |"),
        "{report}"
    );
    assert!(
        report.contains("| §IV-B | IZGs the read probe finds | 32 | 32 | pass |"),
        "{report}"
    );
    for f in [
        "report.md",
        "summary.json",
        "fig8.csv",
        "fig8.png",
        "fig8.svg",
        "fig9.csv",
        "fig9-zenfs.png",
        "fig9-zenfsplus.svg",
        "fig10.csv",
        "fig10.png",
        "tab1.csv",
        "fill-sir-g16.json",
        "probe-read.json",
        "tab3.csv",
        "fig14.png",
        "fig14.svg",
        "ycsb-sir.json",
        "mixgraph-zenfsplus.json",
    ] {
        assert!(dir.0.join("r").join(f).exists(), "{f}");
    }
    let run: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.0.join("r/fill-sir-g16.json")).expect("run"),
    )
    .expect("JSON");
    assert_eq!(run["benchmarks"][0]["ops"], 50_000);
    assert!(run["model_version"].as_u64().is_some());
    // Each check has a verdict; the table has a row per fill run.
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.0.join("r/summary.json")).expect("summary"),
    )
    .expect("JSON");
    let checks = summary["checks"].as_array().expect("checks");
    assert!(checks.len() >= 10, "{checks:?}");
    assert!(checks
        .iter()
        .all(|c| ["pass", "MISS", "n/a"].contains(&c["verdict"].as_str().unwrap())));
    let fig8 = std::fs::read_to_string(dir.0.join("r/fig8.csv")).expect("fig8");
    assert_eq!(fig8.lines().count(), 1 + 10, "{fig8}");
    let fig11 = std::fs::read_to_string(dir.0.join("r/fig11.csv")).expect("fig11");
    assert_eq!(fig11.lines().count(), 1 + 5, "{fig11}");
    assert!(
        report.contains("| Fig. 11 | readwhilewriting MB/s ZenFS+ / ZenFS |"),
        "{report}"
    );
    // P9: the Load and six workloads under each of the four configurations; P10's row.
    let tab3 = std::fs::read_to_string(dir.0.join("r/tab3.csv")).expect("tab3");
    assert_eq!(tab3.lines().count(), 1 + 4 * 7, "{tab3}");
    assert!(tab3.lines().skip(1).all(|l| l
        .rsplit(',')
        .next()
        .and_then(|x| x.parse::<f64>().ok())
        .is_some_and(|x| x > 0.0)));
    assert!(report.contains("| Tab. 3 | YCSB E time gain"), "{report}");
    let zippy = checks
        .iter()
        .find(|c| c["figure"] == "§V-E")
        .expect("ZippyDB's row");
    assert_ne!(zippy["verdict"], "n/a", "{zippy}");
    // The report again from the JSON alone.
    std::fs::remove_file(dir.0.join("r/report.md")).expect("rm");
    let o = znslab(&[
        "reproduce",
        "zenfsplus",
        "--scale",
        "0.002",
        "--report-only",
        "--output",
        &out,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(dir.0.join("r/report.md").exists());
    // An unknown run is refused, naming the runs.
    let o = znslab(&[
        "reproduce",
        "zenfsplus",
        "--only",
        "bogus",
        "--output",
        &out,
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("fill-sir-g16.json"),
        "{}",
        text(&o.stderr)
    );
}
