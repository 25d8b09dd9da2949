//! The ZNS+ reproduction's data: the paper's run list and headline figures with the tolerance
//! of each (`data/znsplus-paper.toml`, from `research/seed-specs.md` A.3 and A.5). The runs
//! and the report (`znsplus.rs`, `znsplus_report.rs`) read it.

use serde::Deserialize;

/// The run list and the paper's figures.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Paper {
    pub(super) runs: Plan,
    #[serde(rename = "target")]
    pub(super) targets: Vec<Target>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Plan {
    pub(super) workloads: Vec<String>,
    pub(super) utilisation_pct: u32,
    pub(super) utilisation_sweep_pct: Vec<u32>,
    pub(super) media: Vec<String>,
    pub(super) chips: Vec<u32>,
    pub(super) lanes_chips: Vec<(u32, u32)>,
    pub(super) schemes: Vec<String>,
}

/// How a figure is held to the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Check {
    Ratio,
    Points,
    Range,
    Ordering,
    Shape,
}

/// One headline figure.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Target {
    pub(super) id: String,
    pub(super) figure: String,
    pub(super) what: String,
    pub(super) check: Check,
    #[serde(default)]
    pub(super) paper: Option<f64>,
    #[serde(default)]
    pub(super) paper_list: Vec<f64>,
    #[serde(default)]
    pub(super) tol: Option<f64>,
    #[serde(default)]
    pub(super) lo: Option<f64>,
    #[serde(default)]
    pub(super) hi: Option<f64>,
    #[serde(default)]
    pub(super) order: Vec<String>,
    #[serde(default)]
    pub(super) note: Option<String>,
}

impl Target {
    /// Whether `got` (a ratio, percentage or value as the check says) passes against the
    /// paper's `i`-th figure.
    pub(super) fn passes(&self, i: usize, got: f64) -> Option<bool> {
        let paper = self.paper_list.get(i).copied().or(self.paper);
        match self.check {
            Check::Ratio => Some((got / paper? - 1.0).abs() <= self.tol?),
            Check::Points => Some((got - paper?).abs() <= self.tol?),
            Check::Range => Some(got >= self.lo? && got <= self.hi?),
            Check::Ordering | Check::Shape => None,
        }
    }
}

/// The paper's data file, parsed (part of the build: a bad one is a bug).
pub(super) fn paper() -> Paper {
    toml::from_str(include_str!("../../data/znsplus-paper.toml")).expect("data/znsplus-paper.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_data_parses_and_every_target_has_what_its_check_needs() {
        let p = paper();
        assert_eq!(p.runs.workloads.len(), 5);
        assert!(p.targets.len() >= 15);
        let mut ids = std::collections::BTreeSet::new();
        for t in &p.targets {
            assert!(ids.insert(t.id.clone()), "{} twice", t.id);
            match t.check {
                Check::Ratio | Check::Points => {
                    assert!(t.tol.is_some(), "{}", t.id);
                    assert!(t.paper.is_some() || !t.paper_list.is_empty(), "{}", t.id);
                }
                Check::Range => assert!(t.lo < t.hi, "{}", t.id),
                Check::Ordering => assert!(t.order.len() >= 2, "{}", t.id),
                Check::Shape => assert!(t.note.is_some(), "{}", t.id),
            }
        }
        let f = p
            .targets
            .iter()
            .find(|t| t.id == "fig7a-fileserver-znsplus")
            .unwrap();
        assert_eq!(f.passes(0, 2.91 * 1.25), Some(true));
        assert_eq!(f.passes(0, 2.91 * 1.35), Some(false));
        assert_eq!(f.passes(0, 2.91 / 1.25), Some(true));
        let s = p.targets.iter().find(|t| t.id == "tab5-tl-share").unwrap();
        assert_eq!(s.passes(1, 85.0), Some(true));
        assert_eq!(s.passes(1, 83.0), Some(false));
    }
}
