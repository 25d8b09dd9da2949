//! ZenFS+'s zone policy (IEEE Access 2023 §IV-B and §IV-C; seed-specs B.1.3, B.1.4, B.1.6), as
//! pure decisions beside ZenFS's ([`super::policy`]): SST files are striped over zones of
//! different independent zone groups (IZGs, found by [`super::izg`]) in 192 KiB units, and with
//! isolation flush and compaction write disjoint sets of IZGs.
//!
//! - A **stripe group** is K zones, one in each of K IZGs of a partition, shared by the files
//!   of one write class (job kind and level, written one after another), as ZenFS shares a
//!   zone among files of one lifetime. Unit u of a file goes to member u mod K.
//! - **Partitions** (the artifact's `io_level = {4, 12}`): with isolation, flush, WAL and
//!   metadata take the first quarter of the IZGs given to ZenFS+ (at least one), compaction
//!   the rest; without, both take from one pool of all of them.
//! - The **width** K = min(partition size, `max_width`) (the paper's maximum striping width,
//!   16).
//!
//! WALs and MANIFESTs are not striped (small synced appends): they take single zones, as
//! ZenFS's policy chooses them, inside the flush partition.

use super::izg::IzgMap;
use super::policy::IoZone;

/// ZenFS+'s stripe unit: the artifact's `IO_SIZE`, also the IZG probe's request size.
pub const STRIPE_UNIT: u64 = super::izg::PROBE_IO_BYTES;

/// The job a file is written for, as RocksDB tells the file system at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum JobKind {
    Wal,
    Manifest,
    Flush,
    Compaction,
    /// Anything else (zonefs tools, tests).
    Other,
}

/// What a file is written for: its job and, for an SST, its level. Zones (and stripe groups)
/// hold files of one class only, so a level's files never share a zone with another's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WriteClass {
    pub kind: JobKind,
    pub level: u32,
}

impl WriteClass {
    /// A file nobody said anything about.
    pub const OTHER: WriteClass = WriteClass {
        kind: JobKind::Other,
        level: 0,
    };
    pub const WAL: WriteClass = WriteClass {
        kind: JobKind::Wal,
        level: 0,
    };

    /// Whether files of this class are striped (flush and compaction outputs: SSTs).
    pub fn striped(self) -> bool {
        matches!(self.kind, JobKind::Flush | JobKind::Compaction)
    }
}

/// The ZenFS+ configurations of §V (B.1.6): striping always; isolation and proactive GC
/// ("reclaiming") each a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlusConfig {
    /// IZGs given to ZenFS+ (Fig. 8's "active IZGs"); 0: every IZG the probe found.
    pub izgs: u32,
    /// The maximum striping width (§IV-C: 16).
    pub max_width: u32,
    /// Flush/compaction isolation (§IV-B): disjoint partitions of IZGs.
    pub isolation: bool,
    /// Proactive GC (§IV-D): dead zones wait for the minor GC every 10 s instead of being
    /// reset when their last file goes, and a full GC copies out the emptiest stripe groups
    /// of a partition short of free space (`fs/reclaim.rs`); writers leave
    /// [`GC_RESERVE_ZONES`] empty zones of each partition to it.
    pub reclaim: bool,
}

impl Default for PlusConfig {
    fn default() -> Self {
        PlusConfig::PAPER
    }
}

impl PlusConfig {
    /// "ZenFS+" of the paper: S, I and R over 16 IZGs (the artifact's 4 + 12), width 16.
    pub const PAPER: PlusConfig = PlusConfig {
        izgs: 16,
        max_width: 16,
        isolation: true,
        reclaim: true,
    };

    /// The largest IZG count and width the superblock keeps (16 and 8 bits).
    pub const MAX_IZGS: u32 = 0xffff;
    pub const MAX_WIDTH: u32 = 0xff;

    /// The IZGs files of `class` write to, on a device of `map`'s groups.
    pub fn partition(&self, map: IzgMap, class: WriteClass) -> Vec<u32> {
        let given = match self.izgs {
            0 => map.groups,
            n => n.min(map.groups),
        };
        if !self.isolation || given < 2 {
            return (0..given).collect();
        }
        let flush = (given / 4).max(1);
        match class.kind {
            JobKind::Compaction => (flush..given).collect(),
            _ => (0..flush).collect(),
        }
    }

    /// How many zones a stripe group of `class` spans.
    pub fn width(&self, map: IzgMap, class: WriteClass) -> usize {
        (self.partition(map, class).len() as u32)
            .min(self.max_width.max(1))
            .max(1) as usize
    }
}

/// An open stripe group: its zones (IO zone numbers, member order), the class whose files fill
/// it, and whether a writer holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StripeGroup {
    pub zones: Vec<usize>,
    pub class: WriteClass,
    pub busy: bool,
    /// The member the next unit goes to (files continue where the last one stopped, so the
    /// members fill evenly).
    pub next: usize,
}

/// What a stripe-group request gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupDecision {
    /// Take this idle open group (an index into the open groups).
    Take(usize),
    /// Open a new group of these empty zones.
    New(Vec<usize>),
    /// Retire this idle open group first (its zones are finished: that frees active zones),
    /// then ask again.
    Retire(usize),
    /// Every group that could be retired has a writer: wait for one to let go.
    Wait,
    /// No zone can be had.
    NoSpace,
}

/// The view a group decision is taken on.
#[derive(Clone, Copy, Debug)]
pub struct GroupView<'a> {
    pub zones: &'a [IoZone],
    pub groups: &'a [StripeGroup],
    /// Device zone number of IO zone 0 (zonefs's metadata zones come first).
    pub first_zone: u32,
    pub map: IzgMap,
    pub active_limit: u32,
}

impl GroupView<'_> {
    fn izg_of(&self, io_zone: usize) -> u32 {
        self.map.group_of(io_zone as u32 + self.first_zone)
    }
}

/// The stripe group a writer of `class` writes next: an idle open group of its class whose
/// members all have room for a unit, else a new group of the first empty zone of each IZG of
/// its partition (IZGs with no zone held by a writer first: Alg. 2's FindFreeIZG), within the
/// active limit (retiring an idle group to stay in it).
pub fn choose_group(cfg: &PlusConfig, view: &GroupView<'_>, class: WriteClass) -> GroupDecision {
    let room = |zi: &usize| {
        let z = &view.zones[*zi];
        z.remaining() >= STRIPE_UNIT && !z.in_action
    };
    if let Some(g) = view
        .groups
        .iter()
        .position(|g| !g.busy && g.class == class && g.zones.iter().all(room))
    {
        return GroupDecision::Take(g);
    }
    let width = cfg.width(view.map, class);
    let active = view.zones.iter().filter(|z| z.counts_active()).count() as u32;
    let idle_group = view.groups.iter().position(|g| !g.busy);
    if active + width as u32 > view.active_limit {
        return match idle_group {
            Some(g) => GroupDecision::Retire(g),
            None if view.groups.is_empty() => GroupDecision::NoSpace,
            None => GroupDecision::Wait,
        };
    }
    // IZGs of the partition, those no writer holds a zone of first, then by number.
    let mut izgs = cfg.partition(view.map, class);
    let held: Vec<u32> = view
        .zones
        .iter()
        .enumerate()
        .filter(|(_, z)| z.busy)
        .map(|(i, _)| view.izg_of(i))
        .collect();
    izgs.sort_by_key(|g| (held.contains(g), *g));
    // With reclaiming, the full GC's reserve of empty zones is not for writers: a group
    // narrower than the width rather than none.
    let takeable = if cfg.reclaim {
        let part = allowed_zones(cfg, view.map, view.first_zone, view.zones.len(), class);
        empty_zones_in(view.zones, &part).saturating_sub(GC_RESERVE_ZONES)
    } else {
        width
    };
    let mut members = Vec::with_capacity(width);
    for g in izgs {
        if members.len() == width.min(takeable) {
            break;
        }
        // Not a member of an open group, though still empty (a group's files may not have
        // reached every member yet).
        let empty = view.zones.iter().enumerate().position(|(i, z)| {
            z.wp == 0 && !z.busy && !z.grouped && !z.finished && !z.in_action && view.izg_of(i) == g
        });
        if let Some(zi) = empty {
            members.push(zi);
        }
    }
    match (members.is_empty(), idle_group) {
        (false, _) => GroupDecision::New(members),
        (true, Some(g)) => GroupDecision::Retire(g),
        (true, None) => GroupDecision::NoSpace,
    }
}

/// ZenFS+'s full GC (§IV-D; B.4-3): it runs while free space (empty and dead zones) is below
/// this share of the IO zones' capacity, and stops once it is this much above.
pub const FULL_GC_TRIGGER_PCT: u64 = 10;
pub const FULL_GC_HYSTERESIS_PCT: u64 = 2;

/// Whether `free` of `capacity` bytes is below the full GC's trigger, or (`running`) still
/// below trigger + hysteresis.
pub fn full_gc_wanted(free: u64, capacity: u64, running: bool) -> bool {
    let pct = FULL_GC_TRIGGER_PCT + if running { FULL_GC_HYSTERESIS_PCT } else { 0 };
    (free as u128) * 100 < (capacity as u128) * pct as u128
}

/// The full GC's victim (§IV-D: greedy, lower levels first): the zones of one stripe group as
/// written (a zone not striped is its own unit) that are all full or finished, idle, and hold
/// less live data than their capacity (garbage, or a tail a finish gave up); the unit with the
/// smallest live share, ties to the lower level, then the lower first zone. `None`: nothing to gain.
pub fn full_gc_victim(zones: &[IoZone]) -> Option<Vec<usize>> {
    use std::collections::BTreeMap;
    // (members, live bytes, capacity, lowest level, every member usable)
    type Unit = (Vec<usize>, u64, u64, u32, bool);
    let mut units: BTreeMap<(u64, usize), Unit> = BTreeMap::new();
    for (i, z) in zones.iter().enumerate() {
        if z.wp == 0 && !z.finished {
            continue;
        }
        let key = if z.stripe == 0 { (0, i) } else { (z.stripe, 0) };
        let u = units
            .entry(key)
            .or_insert((Vec::new(), 0, 0, u32::MAX, true));
        u.0.push(i);
        u.1 += z.used;
        // A zone finished early has lost its unwritten tail: a reset gets that back too.
        u.2 += z.capacity;
        u.3 = u.3.min(z.level);
        u.4 &= !z.busy && !z.in_action && !z.grouped && z.remaining() == 0;
    }
    units
        .into_values()
        .filter(|u| u.4 && u.1 > 0 && u.1 < u.2)
        // Fewest live bytes per byte of the unit (units differ in size once some members
        // are reset); ties to the lower level.
        .min_by_key(|u| (((u.1 as u128) << 64) / u.2.max(1) as u128, u.3, u.0[0]))
        .map(|u| u.0)
}

/// Empty zones each partition keeps for the full GC when reclaiming is on: writers (a new
/// stripe group, a WAL's or MANIFEST's zone) never take the last ones. The paper names no
/// reserve (an assumption, seed-specs B.4-3 gives only the trigger); one zone is enough for the
/// GC to go on, since it resets each victim zone as soon as it is copied out and a victim
/// holds at most a zone of live data.
pub const GC_RESERVE_ZONES: usize = 1;

/// Zones of `part` (a mask over the IO zones) that are empty and free for the taking.
pub fn empty_zones_in(zones: &[IoZone], part: &[bool]) -> usize {
    zones
        .iter()
        .zip(part)
        .filter(|(z, &p)| p && z.wp == 0 && !z.finished && !z.busy && !z.grouped && !z.in_action)
        .count()
}

/// The zones of `zones` (IO zone numbers) a non-striped file of `class` may take: those of
/// its partition's IZGs.
pub fn allowed_zones(
    cfg: &PlusConfig,
    map: IzgMap,
    first_zone: u32,
    zones: usize,
    class: WriteClass,
) -> Vec<bool> {
    let part = cfg.partition(map, class);
    (0..zones)
        .map(|i| part.contains(&map.group_of(i as u32 + first_zone)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: IzgMap = IzgMap { groups: 32 };
    const CAP: u64 = 384 * STRIPE_UNIT;

    fn zones(n: usize) -> Vec<IoZone> {
        (0..n)
            .map(|_| IoZone {
                capacity: CAP,
                ..IoZone::default()
            })
            .collect()
    }

    fn class(kind: JobKind, level: u32) -> WriteClass {
        WriteClass { kind, level }
    }

    fn view<'a>(zones: &'a [IoZone], groups: &'a [StripeGroup]) -> GroupView<'a> {
        GroupView {
            zones,
            groups,
            first_zone: 3,
            map: MAP,
            active_limit: 380,
        }
    }

    #[test]
    fn isolation_splits_the_izgs_a_quarter_for_flush_the_rest_for_compaction() {
        let cfg = PlusConfig::default();
        let flush = cfg.partition(MAP, class(JobKind::Flush, 0));
        let compaction = cfg.partition(MAP, class(JobKind::Compaction, 1));
        assert_eq!(flush, vec![0, 1, 2, 3]);
        assert_eq!(compaction, (4..16).collect::<Vec<_>>());
        assert_eq!(cfg.partition(MAP, class(JobKind::Wal, 0)), flush);
        let shared = PlusConfig {
            isolation: false,
            ..cfg
        };
        assert_eq!(
            shared.partition(MAP, class(JobKind::Flush, 0)),
            (0..16).collect::<Vec<_>>()
        );
        assert_eq!(shared.width(MAP, class(JobKind::Compaction, 2)), 16);
        let wide = PlusConfig {
            izgs: 0,
            isolation: false,
            ..cfg
        };
        assert_eq!(wide.width(MAP, class(JobKind::Flush, 0)), 16);
        assert_eq!(wide.partition(MAP, class(JobKind::Flush, 0)).len(), 32);
    }

    #[test]
    fn a_new_group_takes_one_empty_zone_in_each_izg_of_the_partition() {
        let cfg = PlusConfig::default();
        let z = zones(200);
        let d = choose_group(&cfg, &view(&z, &[]), class(JobKind::Compaction, 1));
        let GroupDecision::New(members) = d else {
            panic!("{d:?}")
        };
        assert_eq!(members.len(), 12);
        let izgs: Vec<u32> = members.iter().map(|&i| (i as u32 + 3) % 32).collect();
        assert_eq!(izgs, (4..16).collect::<Vec<_>>());
    }

    #[test]
    fn an_open_group_of_the_class_is_taken_until_a_member_is_full() {
        let cfg = PlusConfig::default();
        let mut z = zones(64);
        let g = StripeGroup {
            zones: vec![1, 2, 3, 4],
            class: class(JobKind::Flush, 0),
            busy: false,
            next: 0,
        };
        let groups = [g];
        for &i in &groups[0].zones {
            z[i].wp = STRIPE_UNIT;
            z[i].used = STRIPE_UNIT;
        }
        let c = class(JobKind::Flush, 0);
        assert_eq!(
            choose_group(&cfg, &view(&z, &groups), c),
            GroupDecision::Take(0)
        );
        // Another level never shares it.
        assert!(matches!(
            choose_group(&cfg, &view(&z, &groups), class(JobKind::Compaction, 1)),
            GroupDecision::New(_)
        ));
        z[3].wp = CAP - 4096;
        assert!(matches!(
            choose_group(&cfg, &view(&z, &groups), c),
            GroupDecision::New(_)
        ));
    }

    #[test]
    fn an_idle_groups_empty_members_count_against_the_active_limit() {
        // An idle open group of four zones, one written: all four will be written, so a
        // new group must not open beside it once the limit leaves no room for both.
        let cfg = PlusConfig::default();
        let mut z = zones(64);
        let members = vec![5, 6, 7, 8];
        for &m in &members {
            z[m].grouped = true;
        }
        z[5].wp = STRIPE_UNIT;
        let groups = [StripeGroup {
            zones: members,
            class: class(JobKind::Compaction, 1),
            busy: false,
            next: 1,
        }];
        let mut v = view(&z, &groups);
        v.active_limit = 4 + 3;
        assert_eq!(
            choose_group(&cfg, &v, class(JobKind::Flush, 0)),
            GroupDecision::Retire(0)
        );
    }

    #[test]
    fn a_new_group_never_takes_an_empty_member_of_an_open_group() {
        // Without isolation every class draws from all 16 IZGs. An open group of 16 zones
        // whose files wrote only its first member: the other 15 are still empty.
        let cfg = PlusConfig {
            isolation: false,
            ..PlusConfig::default()
        };
        let mut z = zones(64);
        let members: Vec<usize> = (0..16).map(|g| (g + 32 - 3) % 32).collect();
        z[members[0]].wp = STRIPE_UNIT;
        for &m in &members {
            z[m].grouped = true;
        }
        let groups = [StripeGroup {
            zones: members.clone(),
            class: class(JobKind::Compaction, 1),
            busy: false,
            next: 1,
        }];
        let d = choose_group(&cfg, &view(&z, &groups), class(JobKind::Compaction, 2));
        let GroupDecision::New(new) = d else {
            panic!("{d:?}")
        };
        assert!(
            new.iter().all(|i| !members.contains(i)),
            "{new:?} in {members:?}"
        );
    }

    #[test]
    fn full_gc_takes_the_group_with_the_least_live_data_lower_levels_first() {
        let mut z = zones(8);
        // Group 7: zones 0 and 1, L2, 10 live. Group 9: zones 2 and 3, L1, 10 live. Zone 4
        // alone (a WAL's), 5 live. Zone 5: open group member. Zone 6: all dead.
        for (i, stripe, level, used) in [
            (0, 7, 2, 4),
            (1, 7, 2, 6),
            (2, 9, 1, 5),
            (3, 9, 1, 5),
            (4, 0, 0, 5),
            (5, 11, 0, 1),
            (6, 0, 0, 0),
        ] {
            z[i].wp = CAP;
            z[i].stripe = stripe;
            z[i].level = level;
            z[i].used = used;
        }
        z[5].grouped = true;
        assert_eq!(full_gc_victim(&z), Some(vec![4]));
        z[4].used = 11;
        // 10 live in each group: the lower level wins.
        assert_eq!(full_gc_victim(&z), Some(vec![2, 3]));
        // A member still written is not a victim; nor is a unit with no garbage.
        z[3].wp = CAP / 2;
        assert_eq!(full_gc_victim(&z), Some(vec![0, 1]));
        z[0].busy = true;
        assert_eq!(full_gc_victim(&z), Some(vec![4]));
        z[4].used = CAP;
        assert_eq!(full_gc_victim(&z), None);
        assert!(full_gc_wanted(9, 100, false));
        assert!(!full_gc_wanted(10, 100, false));
        assert!(full_gc_wanted(11, 100, true));
        assert!(!full_gc_wanted(12, 100, true));
    }

    #[test]
    fn at_the_active_limit_an_idle_group_is_retired_or_the_writer_waits() {
        let cfg = PlusConfig::default();
        let mut z = zones(64);
        let mut groups = vec![StripeGroup {
            zones: vec![0, 1],
            class: class(JobKind::Compaction, 3),
            busy: false,
            next: 0,
        }];
        for zi in [0, 1] {
            z[zi].wp = STRIPE_UNIT;
        }
        let mut v = view(&z, &groups);
        v.active_limit = 4;
        assert_eq!(
            choose_group(&cfg, &v, class(JobKind::Flush, 0)),
            GroupDecision::Retire(0)
        );
        groups[0].busy = true;
        let mut v = view(&z, &groups);
        v.active_limit = 4;
        assert_eq!(
            choose_group(&cfg, &v, class(JobKind::Flush, 0)),
            GroupDecision::Wait
        );
    }
}
