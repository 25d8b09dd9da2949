//! ZNS+'s parameters in a device configuration (`[znsplus]`).

use serde::{Deserialize, Serialize};

/// When the device copies a TL-open zone's valid blocks into its new block group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Plugging {
    /// LBA-ordered (ZNS+ §3.2.2, Fig. 4): when the write pointer passes them, on the write's
    /// path, and fully valid chunks right after each write.
    Lba,
    /// PPA-ordered (§3.2.2): fully valid chunks next in line are also copied in the background
    /// on chips idle at a command boundary once the arriving command has issued its work
    /// (yielding to it); the rest as LBA-ordered.
    /// The paper's evaluated default (§4: "PP on").
    #[default]
    Ppa,
}

/// ZNS+'s threaded logging, under `[znsplus]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZnsplusConfig {
    /// Zones TL-open at once at most: one per F2FS log (ZNS+ §3.2.2: "the number of LogFBGs
    /// is at most six").
    pub max_tl_open: u32,
    pub plugging: Plugging,
    /// Copy whole same-chip chunks by copyback (§2.1, Tab. 2). Off: every copy is a read and
    /// a program over the channel, as §4.2's "w/o cpbk" ablations and §4.6's Cosmos+ (no
    /// copyback) run.
    pub copyback: bool,
}

impl Default for ZnsplusConfig {
    fn default() -> Self {
        ZnsplusConfig {
            max_tl_open: 6,
            plugging: Plugging::Ppa,
            copyback: true,
        }
    }
}
