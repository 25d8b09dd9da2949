//! zonefs's mkfs choices as data: the zone policy (ZenFS's or ZenFS+'s, with its switches),
//! the IZG probe, the active-zone limit, the finish threshold and GC. db_bench's flags
//! (`--fs_policy`, `--zenfsplus_*`, ...) and `znslab ycsb`'s are read into it, and a run
//! list's YCSB runs carry it; [`ZonefsSpec::mkfs_options`] is the one place it becomes
//! zonefs's [`MkfsOptions`].

use anyhow::{anyhow, bail};
use host::zonefs::izg::ProbeConfig;
use host::zonefs::plus::PlusConfig;
use host::zonefs::policy::Policy;
use host::zonefs::MkfsOptions;
use serde::{Deserialize, Serialize};

/// zonefs's mkfs choices (db_bench's flag names; defaults are db_bench's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ZonefsSpec {
    /// `zenfs` or `zenfsplus`.
    pub fs_policy: String,
    /// `write`, `read`, `none`, or empty: write under zenfsplus, none under zenfs.
    pub izg_probe: String,
    /// zenfsplus: IZGs written (0: all found), the most zones an SST is striped over,
    /// flush/compaction isolation, reclaiming.
    pub zenfsplus_izgs: u32,
    pub max_stripe_width: u32,
    pub zenfsplus_isolation: bool,
    pub zenfsplus_reclaim: bool,
    /// The most IO zones written at once (0: the device's limit).
    pub max_active_io_zones: u32,
    pub finish_threshold: u32,
    pub enable_gc: bool,
}

impl Default for ZonefsSpec {
    fn default() -> Self {
        let p = PlusConfig::PAPER;
        ZonefsSpec {
            fs_policy: "zenfs".into(),
            izg_probe: String::new(),
            zenfsplus_izgs: p.izgs,
            max_stripe_width: p.max_width,
            zenfsplus_isolation: p.isolation,
            zenfsplus_reclaim: p.reclaim,
            max_active_io_zones: 0,
            finish_threshold: 0,
            enable_gc: false,
        }
    }
}

impl ZonefsSpec {
    pub fn is_default(&self) -> bool {
        *self == ZonefsSpec::default()
    }

    /// ZenFS+ with these switches (`izgs` 0: every IZG found).
    pub fn zenfsplus(isolation: bool, reclaim: bool) -> ZonefsSpec {
        ZonefsSpec {
            fs_policy: "zenfsplus".into(),
            zenfsplus_isolation: isolation,
            zenfsplus_reclaim: reclaim,
            ..ZonefsSpec::default()
        }
    }

    /// zonefs's mkfs options, or an error naming the value that is wrong.
    pub fn mkfs_options(&self) -> anyhow::Result<MkfsOptions> {
        let policy = match self.fs_policy.as_str() {
            "zenfs" => Policy::ZenFs,
            "zenfsplus" => Policy::ZenFsPlus(PlusConfig {
                izgs: self.zenfsplus_izgs,
                max_width: self.max_stripe_width.max(1),
                isolation: self.zenfsplus_isolation,
                reclaim: self.zenfsplus_reclaim,
            }),
            other => bail!("--fs_policy={other}: expected zenfs or zenfsplus"),
        };
        let izg_probe = match (self.izg_probe.as_str(), policy) {
            ("write", _) | ("", Policy::ZenFsPlus(_)) => Some(ProbeConfig::write_periodic()),
            ("read", _) => Some(ProbeConfig::read_full(128)),
            ("", _) | ("none", _) => None,
            (other, _) => bail!("--izg_probe={other}: expected write, read or none"),
        };
        if self.finish_threshold > 100 {
            return Err(anyhow!(
                "--finish_threshold={}: a percentage, at most 100",
                self.finish_threshold
            ));
        }
        Ok(MkfsOptions {
            finish_threshold: self.finish_threshold,
            enable_gc: self.enable_gc,
            policy,
            izg_probe,
            max_active_io_zones: self.max_active_io_zones,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_zenfs_and_zenfsplus_carries_its_switches() {
        let m = ZonefsSpec::default().mkfs_options().unwrap();
        assert_eq!(m.policy, Policy::ZenFs);
        assert!(m.izg_probe.is_none());
        let m = ZonefsSpec::zenfsplus(false, true).mkfs_options().unwrap();
        let Policy::ZenFsPlus(p) = m.policy else {
            panic!("{:?}", m.policy)
        };
        assert!(!p.isolation && p.reclaim && p.max_width == 16);
        assert!(m.izg_probe.is_some());
        for bad in [
            ZonefsSpec {
                fs_policy: "f2fs".into(),
                ..ZonefsSpec::default()
            },
            ZonefsSpec {
                izg_probe: "guess".into(),
                ..ZonefsSpec::default()
            },
            ZonefsSpec {
                finish_threshold: 101,
                ..ZonefsSpec::default()
            },
        ] {
            assert!(bad.mkfs_options().is_err(), "{bad:?}");
        }
    }
}
