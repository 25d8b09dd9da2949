//! Zone policies: where a file's next extent goes and which zones GC empties, as pure decisions
//! on a view of the IO zones ([`ZonesView`]), apart from the I/O that carries them out (the
//! file system finishes, opens, resets and copies; a policy only says what to do).
//!
//! [`ZenFsPolicy`] is ZenFS's behaviour and the default ([`Policy::ZenFs`]). A second policy
//! (ZenFS+'s striping over zone groups, flush/compaction isolation, proactive GC) goes beside
//! it as another [`Policy`] variant implementing [`ZoneAllocator`] and [`GcPolicy`].
//!
//! A decision gets a borrowed view and returns indices into it; it never waits, borrows the file
//! system's state or draws random numbers, so the same view gives the same decision.

use super::izg::IzgMap;
use super::plus::{PlusConfig, WriteClass};

/// Open zones ZenFS keeps back from non-WAL files: the two of the active reserve and one
/// always left for a WAL (zenfs PR #114).
pub const RESERVED_OPEN_NON_WAL: u32 = 3;
/// GC (ZenFS's GCWorker): nothing while more than 20% is free; then zones whose garbage
/// exceeds `100 - GC_SLOPE * (GC_START_LEVEL - free%)` percent are migrated.
pub const GC_START_LEVEL: u64 = 20;
pub const GC_SLOPE: u64 = 3;

/// RocksDB's write lifetime hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lifetime {
    NotSet = 0,
    None = 1,
    Short = 2,
    Medium = 3,
    Long = 4,
    Extreme = 5,
}

/// ZenFS's GetLifeTimeDiff: how well a zone of lifetime `zone` suits a file of `file`.
pub fn lifetime_diff(zone: u32, file: u32) -> u32 {
    if file <= Lifetime::None as u32 {
        return if zone == file { 0 } else { 100 };
    }
    match zone.cmp(&file) {
        std::cmp::Ordering::Greater => zone - file,
        std::cmp::Ordering::Equal => 50,
        std::cmp::Ordering::Less => 100,
    }
}

/// An IO zone as the file system tracks it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoZone {
    /// Device byte offset of the zone, its writable capacity, and its write pointer (bytes
    /// from the start).
    pub start: u64,
    pub capacity: u64,
    pub wp: u64,
    pub lifetime: u32,
    /// Bytes of live extents in the zone.
    pub used: u64,
    /// Owned by a writer (or by a GC migration).
    pub busy: bool,
    /// A member of an open ZenFS+ stripe group: only that group's writers write it.
    pub grouped: bool,
    pub finished: bool,
    /// The LSM level of the stripe group it was written for (ZenFS+'s minor GC resets lower
    /// levels first); 0 when not striped.
    pub level: u32,
    /// The stripe group it was written in (a serial number, 0 when none): ZenFS+'s full GC
    /// empties a group's zones together.
    pub stripe: u64,
    /// A Reset or Finish of it is in flight, or chosen to come: no other task picks it for a
    /// writer or another action meanwhile (several tasks delete, allocate and finish side by
    /// side; a zone reset twice may lose a new file's data, one finished beside its reset
    /// ends Full where zonefs thinks it empty).
    pub in_action: bool,
}

impl IoZone {
    /// Bytes a writer may still append (none once finished).
    pub fn remaining(&self) -> u64 {
        if self.finished {
            0
        } else {
            self.capacity - self.wp
        }
    }

    /// Holds no live data, yet written: nothing but a reset makes it usable again (and no
    /// writer, group or action holds it).
    pub fn is_dead(&self) -> bool {
        !self.busy
            && !self.in_action
            && !self.grouped
            && self.used == 0
            && (self.wp > 0 || self.finished)
    }

    /// As a reset leaves it.
    pub fn clear(&mut self) {
        self.wp = 0;
        self.finished = false;
        self.lifetime = 0;
        self.level = 0;
        self.stripe = 0;
    }

    /// Written and not full: the device counts it against its active limit.
    pub fn is_active(&self) -> bool {
        self.wp > 0 && self.remaining() > 0
    }

    /// Counts against the active limit in zonefs's decisions: active on the device, or about
    /// to be (owned by a writer, or held by an open stripe group or the full GC, which write
    /// it next even while it is still empty).
    pub fn counts_active(&self) -> bool {
        self.is_active() || ((self.busy || self.grouped) && !self.finished)
    }
}

/// What a policy decides on: the IO zones (index = IO zone number) and the limits zonefs
/// works within.
#[derive(Clone, Copy, Debug)]
pub struct ZonesView<'a> {
    pub zones: &'a [IoZone],
    /// The device's open limit (ZenFS's open tokens come from it).
    pub open_limit: u32,
    /// Active zones IO files may have (the device's limit less zonefs's reserve).
    pub active_limit: u32,
    /// Finish an idle zone once less than this percentage of it is left (0 = never).
    pub finish_threshold: u32,
}

/// A writer asks for a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocRequest {
    /// The file's lifetime hint ([`Lifetime`] as a number).
    pub lifetime: u32,
    /// A WAL (ZenFS's sparse `.log` files) asks.
    pub wal: bool,
    /// What the file is written for (ZenFS's policy does not look at it).
    pub class: WriteClass,
}

/// Where an allocation goes, or what must happen first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Take this partly written zone.
    Open(usize),
    /// Take this empty zone; it gets the request's lifetime.
    Empty(usize),
    /// Finish this idle zone to free an active zone, then ask again.
    Finish(usize),
    /// Every active zone has a writer: wait for one to let go, then ask again.
    Wait,
    /// No zone can be had.
    NoSpace,
}

/// Zone allocation (ZenFS's AllocateIOZone), as decisions.
pub trait ZoneAllocator {
    /// The policy's name, as its option spells it.
    fn name(&self) -> &'static str;

    /// Idle zones to finish before choosing (ZenFS's finish threshold), asked once per
    /// allocation.
    fn finish_first(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Vec<usize>;

    /// Whether the request may take an open token now (else it waits for a writer to let go).
    fn has_open_token(&self, view: &ZonesView<'_>, req: &AllocRequest) -> bool;

    /// The zone for the request, or what to do first.
    fn choose(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Decision;
}

/// Garbage collection's choices (ZenFS's GCWorker).
pub trait GcPolicy {
    /// Zones whose live extents a GC pass migrates now (none: no pass is needed).
    fn choose_victims(&self, view: &ZonesView<'_>) -> Vec<usize>;

    /// A zone that takes a migrated extent of `room` bytes of a file of `lifetime`, or None.
    fn choose_target(&self, view: &ZonesView<'_>, lifetime: u32, room: u64) -> Option<usize>;
}

/// The zone policy a file system uses (a zonefs option; not kept on the device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// ZenFS's allocation and GC ([`ZenFsPolicy`]).
    #[default]
    ZenFs,
    /// ZenFS+'s: SSTs striped over independent zone groups, flush/compaction isolation
    /// ([`super::plus`]); needs the IZG map the probe keeps in the superblock.
    ZenFsPlus(PlusConfig),
}

impl Policy {
    /// Every policy, for option parsing.
    pub const ALL: [Policy; 2] = [Policy::ZenFs, Policy::ZenFsPlus(PlusConfig::PAPER)];

    pub fn name(self) -> &'static str {
        match self {
            Policy::ZenFs => ZenFsPolicy::NAME,
            Policy::ZenFsPlus(_) => "zenfsplus",
        }
    }

    /// The policy named `name`.
    pub fn by_name(name: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == name)
    }

    /// ZenFS+'s configuration, if this is its policy.
    pub fn plus(self) -> Option<PlusConfig> {
        match self {
            Policy::ZenFs => None,
            Policy::ZenFsPlus(c) => Some(c),
        }
    }

    /// The single-zone allocator (every file under ZenFS; WALs and MANIFESTs under ZenFS+,
    /// inside their partition of `izg`'s groups).
    pub(crate) fn allocator(self, izg: Option<IzgMap>) -> Box<dyn ZoneAllocator> {
        match (self, izg) {
            (Policy::ZenFsPlus(cfg), Some(map)) => Box::new(PartitionedZenFs { cfg, map }),
            _ => Box::new(ZenFsPolicy),
        }
    }

    pub(crate) fn gc(self) -> Box<dyn GcPolicy> {
        Box::new(ZenFsPolicy)
    }
}

/// ZenFS's single-zone allocation kept inside the request's IZG partition (ZenFS+'s WALs and
/// MANIFESTs go to the flush partition with the flushes).
struct PartitionedZenFs {
    cfg: PlusConfig,
    map: IzgMap,
}

impl PartitionedZenFs {
    /// The view with every zone outside the request's partition marked as chosen for another
    /// action, which ZenFS's decisions skip (and still count as active when it is); with
    /// reclaiming, the partition's last empty zones too (the full GC's reserve).
    fn masked(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Vec<IoZone> {
        let allowed = super::plus::allowed_zones(
            &self.cfg,
            self.map,
            super::fs::META_ZONES,
            view.zones.len(),
            req.class,
        );
        let reserved = self.cfg.reclaim
            && super::plus::empty_zones_in(view.zones, &allowed) <= super::plus::GC_RESERVE_ZONES;
        view.zones
            .iter()
            .zip(allowed)
            .map(|(z, ok)| IoZone {
                in_action: z.in_action || z.grouped || !ok || (reserved && z.wp == 0),
                ..z.clone()
            })
            .collect()
    }
}

impl ZoneAllocator for PartitionedZenFs {
    fn name(&self) -> &'static str {
        "zenfsplus"
    }

    fn finish_first(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Vec<usize> {
        let zones = self.masked(view, req);
        ZenFsPolicy.finish_first(
            &ZonesView {
                zones: &zones,
                ..*view
            },
            req,
        )
    }

    fn has_open_token(&self, view: &ZonesView<'_>, req: &AllocRequest) -> bool {
        ZenFsPolicy.has_open_token(view, req)
    }

    fn choose(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Decision {
        let zones = self.masked(view, req);
        ZenFsPolicy.choose(
            &ZonesView {
                zones: &zones,
                ..*view
            },
            req,
        )
    }
}

/// ZenFS's policy: the finish-threshold pass (non-WAL files), an open token (WALs may use
/// `max_open - 2`, other files `max_open - 3`), the best lifetime match among partly written
/// zones, else an empty zone under the active limit, finishing the cheapest idle zone when
/// that limit binds. GC starts at 20% free space and takes full zones whose garbage exceeds
/// `100 - 3 * (20 - free%)` percent, moving extents into partly written zones only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZenFsPolicy;

impl ZenFsPolicy {
    pub const NAME: &'static str = "zenfs";
}

impl ZoneAllocator for ZenFsPolicy {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn finish_first(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Vec<usize> {
        let pct = view.finish_threshold as u64;
        if req.wal || pct == 0 {
            return Vec::new();
        }
        view.zones
            .iter()
            .enumerate()
            .filter(|(_, z)| {
                !z.busy && !z.in_action && z.is_active() && z.remaining() * 100 < z.capacity * pct
            })
            .map(|(i, _)| i)
            .collect()
    }

    fn has_open_token(&self, view: &ZonesView<'_>, req: &AllocRequest) -> bool {
        // A zone held by a writer is an open zone.
        let held = view.zones.iter().filter(|z| z.busy).count() as u32;
        let reserve = if req.wal { 2 } else { RESERVED_OPEN_NON_WAL };
        held < view.open_limit - reserve
    }

    fn choose(&self, view: &ZonesView<'_>, req: &AllocRequest) -> Decision {
        let zones = view.zones;
        let mut best: Option<(u32, usize)> = None;
        for (i, z) in zones.iter().enumerate() {
            if z.busy || z.in_action || z.used == 0 || z.remaining() == 0 {
                continue;
            }
            let d = lifetime_diff(z.lifetime, req.lifetime);
            // Ties go to the later zone (ZenFS compares with <=).
            if best.is_none_or(|(bd, _)| d <= bd) {
                best = Some((d, i));
            }
        }
        // A zone a writer holds counts as active even before its first write lands, or
        // concurrent allocations overrun the device's active limit.
        let active = zones.iter().filter(|z| z.counts_active()).count() as u32;
        let empty = zones
            .iter()
            .position(|z| z.wp == 0 && !z.busy && !z.finished && !z.in_action);
        // The idle partial zone with the least room left, to finish for a token.
        let cheapest = zones
            .iter()
            .enumerate()
            .filter(|(_, z)| !z.busy && !z.in_action && z.is_active())
            .min_by_key(|(_, z)| z.remaining())
            .map(|(i, _)| i);
        match (best, empty, cheapest) {
            (Some((d, i)), _, _) if d < 50 => Decision::Open(i),
            (_, Some(e), _) if active < view.active_limit => Decision::Empty(e),
            (Some((50, i)), _, _) => Decision::Open(i),
            (_, Some(_), Some(c)) => Decision::Finish(c),
            (_, Some(_), None) if active > 0 => Decision::Wait,
            _ => Decision::NoSpace,
        }
    }
}

impl GcPolicy for ZenFsPolicy {
    fn choose_victims(&self, view: &ZonesView<'_>) -> Vec<usize> {
        let (mut free, mut used, mut reclaimable) = (0u64, 0u64, 0u64);
        for z in view.zones {
            free += z.remaining();
            used += z.used;
            if z.remaining() == 0 {
                reclaimable += z.capacity - z.used;
            }
        }
        let free_pct = 100 * free / (free + used + reclaimable).max(1);
        if free_pct > GC_START_LEVEL {
            return Vec::new();
        }
        let threshold = 100 - GC_SLOPE * (GC_START_LEVEL - free_pct);
        view.zones
            .iter()
            .enumerate()
            .filter(|(_, z)| {
                let garbage = 100 - 100 * z.used / z.capacity.max(1);
                !z.busy
                    && !z.in_action
                    && !z.grouped
                    && z.remaining() == 0
                    && z.used > 0
                    && garbage > threshold
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// ZenFS's TakeMigrateZone with GetBestOpenZoneMatch: a partly written, idle zone with
    /// room, the best lifetime match (any distance will do: ZenFS starts from "not good" and
    /// accepts ties, which go to the later zone); never an empty zone, which GC must not take
    /// from writers.
    fn choose_target(&self, view: &ZonesView<'_>, lifetime: u32, room: u64) -> Option<usize> {
        let mut best: Option<(u32, usize)> = None;
        for (i, z) in view.zones.iter().enumerate() {
            if z.busy || z.grouped || z.used == 0 || z.remaining() < room {
                continue;
            }
            let d = lifetime_diff(z.lifetime, lifetime);
            if best.is_none_or(|(bd, _)| d <= bd) {
                best = Some((d, i));
            }
        }
        best.map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: u64 = 1000;

    fn empty() -> IoZone {
        IoZone {
            capacity: CAP,
            ..IoZone::default()
        }
    }

    /// A partly written zone of `lifetime` with `wp` bytes written, all live.
    fn partial(lifetime: Lifetime, wp: u64) -> IoZone {
        IoZone {
            capacity: CAP,
            wp,
            used: wp,
            lifetime: lifetime as u32,
            ..IoZone::default()
        }
    }

    fn view(zones: &[IoZone], active_limit: u32) -> ZonesView<'_> {
        ZonesView {
            zones,
            open_limit: 14,
            active_limit,
            finish_threshold: 0,
        }
    }

    fn req(lifetime: Lifetime) -> AllocRequest {
        AllocRequest {
            lifetime: lifetime as u32,
            wal: false,
            class: WriteClass::OTHER,
        }
    }

    #[test]
    fn lifetime_diff_prefers_a_longer_zone_to_an_equal_one() {
        let (m, l) = (Lifetime::Medium as u32, Lifetime::Long as u32);
        assert_eq!(lifetime_diff(l, m), 1);
        assert_eq!(lifetime_diff(m, m), 50);
        assert_eq!(lifetime_diff(m, l), 100);
        // NotSet and None files match only their own kind.
        assert_eq!(lifetime_diff(1, 1), 0);
        assert_eq!(lifetime_diff(2, 1), 100);
    }

    #[test]
    fn a_good_lifetime_match_wins_over_an_empty_zone() {
        let zones = [
            empty(),
            partial(Lifetime::Medium, 100),
            partial(Lifetime::Long, 100),
        ];
        assert_eq!(
            ZenFsPolicy.choose(&view(&zones, 10), &req(Lifetime::Medium)),
            Decision::Open(2)
        );
        // Ties go to the later zone.
        let zones = [
            partial(Lifetime::Long, 100),
            partial(Lifetime::Long, 200),
            empty(),
        ];
        assert_eq!(
            ZenFsPolicy.choose(&view(&zones, 10), &req(Lifetime::Medium)),
            Decision::Open(1)
        );
    }

    #[test]
    fn an_equal_lifetime_waits_behind_an_empty_zone_under_the_active_limit() {
        let zones = [partial(Lifetime::Medium, 100), empty(), empty()];
        let r = req(Lifetime::Medium);
        assert_eq!(ZenFsPolicy.choose(&view(&zones, 2), &r), Decision::Empty(1));
        // At the active limit the equal match is taken.
        assert_eq!(ZenFsPolicy.choose(&view(&zones, 1), &r), Decision::Open(0));
    }

    #[test]
    fn at_the_active_limit_the_fullest_idle_zone_is_finished_or_the_writer_waits() {
        let mut zones = [
            partial(Lifetime::Short, 300),
            partial(Lifetime::Short, 900),
            empty(),
        ];
        let r = req(Lifetime::Extreme); // no match is good enough
        assert_eq!(
            ZenFsPolicy.choose(&view(&zones, 2), &r),
            Decision::Finish(1)
        );
        zones[0].busy = true;
        zones[1].busy = true;
        assert_eq!(ZenFsPolicy.choose(&view(&zones, 2), &r), Decision::Wait);
        // No empty zone and nothing to take: no space.
        let full = [IoZone {
            finished: true,
            used: 10,
            wp: 10,
            ..empty()
        }];
        assert_eq!(ZenFsPolicy.choose(&view(&full, 2), &r), Decision::NoSpace);
    }

    #[test]
    fn finish_threshold_and_open_tokens() {
        let zones = [
            partial(Lifetime::Short, 950),
            partial(Lifetime::Short, 800),
            IoZone {
                busy: true,
                ..partial(Lifetime::Short, 990)
            },
        ];
        let mut v = view(&zones, 10);
        assert!(ZenFsPolicy
            .finish_first(&v, &req(Lifetime::Short))
            .is_empty());
        v.finish_threshold = 10;
        assert_eq!(ZenFsPolicy.finish_first(&v, &req(Lifetime::Short)), vec![0]);
        let wal = AllocRequest {
            wal: true,
            ..req(Lifetime::Short)
        };
        assert!(ZenFsPolicy.finish_first(&v, &wal).is_empty());
        // One zone held: a WAL may hold open_limit - 2, other files open_limit - 3.
        v.open_limit = 4;
        assert!(!ZenFsPolicy.has_open_token(&v, &req(Lifetime::Short)));
        assert!(ZenFsPolicy.has_open_token(&v, &wal));
    }

    #[test]
    fn gc_starts_at_20_percent_free_and_takes_mostly_dead_full_zones() {
        let full = |used| IoZone {
            wp: CAP,
            used,
            ..empty()
        };
        // 2 of 10 zones free (20%): garbage must exceed 100 - 3 * (20 - 20) = 100%: none.
        let mut zones: Vec<IoZone> = (0..8).map(|_| full(100)).collect();
        zones.extend([empty(), empty()]);
        assert!(ZenFsPolicy.choose_victims(&view(&zones, 10)).is_empty());
        // 1 of 10 free (10%): garbage above 70% goes.
        zones[9] = full(500);
        zones[3].used = 310; // 69% garbage: stays
        zones[5].used = 0; // nothing live: a reset's job, not GC's
        let victims = ZenFsPolicy.choose_victims(&view(&zones, 10));
        assert_eq!(victims, vec![0, 1, 2, 4, 6, 7]);
        // Plenty free: no pass.
        let roomy: Vec<IoZone> = (0..10).map(|_| empty()).collect();
        assert!(ZenFsPolicy.choose_victims(&view(&roomy, 10)).is_empty());
    }

    #[test]
    fn gc_targets_only_partly_written_zones_with_room() {
        let zones = [
            empty(),
            partial(Lifetime::Extreme, 950),
            partial(Lifetime::Medium, 500),
            partial(Lifetime::Long, 100),
        ];
        let v = view(&zones, 10);
        let m = Lifetime::Medium as u32;
        assert_eq!(ZenFsPolicy.choose_target(&v, m, 100), Some(3));
        // Only the zones with room count; a bad match still does.
        assert_eq!(ZenFsPolicy.choose_target(&v, m, 600), Some(3));
        let e = Lifetime::Extreme as u32;
        assert_eq!(ZenFsPolicy.choose_target(&v, e, 10), Some(1));
        assert_eq!(ZenFsPolicy.choose_target(&v, e, 600), Some(3));
        assert_eq!(ZenFsPolicy.choose_target(&v, m, 950), None);
    }

    #[test]
    fn policies_are_found_by_name() {
        assert_eq!(Policy::by_name("zenfs"), Some(Policy::ZenFs));
        assert_eq!(Policy::default().name(), "zenfs");
        assert_eq!(Policy::by_name("zenfs+"), None);
    }
}
