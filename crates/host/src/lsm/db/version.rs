//! The version: which tables make up each level, the MANIFEST's edit records that change it,
//! and the level target sizes compaction aims at (RocksDB's `VersionStorageInfo`).

use super::super::format::{get_varint, put_varint};
use super::options::DbOptions;
use super::{DbError, Inner, State, Stopper};

/// Bytes in each level.
pub(super) fn level_sizes(st: &State) -> Vec<u64> {
    st.levels
        .iter()
        .map(|l| l.iter().map(|f| f.size).sum())
        .collect()
}

/// The level L0 compacts into and each level's target size (index 0 unused), from the levels'
/// sizes: RocksDB's `VersionStorageInfo::CalculateBaseBytes`.
pub(super) fn level_targets(opts: &DbOptions, sizes: &[u64]) -> (usize, Vec<u64>) {
    let n = sizes.len();
    let mult = opts.level_multiplier.max(1);
    let base_max = opts.max_bytes_for_level_base;
    let mut targets = vec![0u64; n];
    if !opts.level_compaction_dynamic_level_bytes {
        let mut t = base_max;
        for target in targets.iter_mut().skip(1) {
            *target = t;
            t = t.saturating_mul(mult);
        }
        return (1, targets);
    }
    let first_non_empty = (1..n).find(|&l| sizes[l] > 0);
    let max_size = sizes.iter().skip(1).copied().max().unwrap_or(0);
    let Some(first_non_empty) = first_non_empty else {
        // Nothing below L0 yet: L0 goes straight to the last level.
        targets.iter_mut().skip(1).for_each(|t| *t = base_max);
        return (n - 1, targets);
    };
    // The first non-empty level's size if the largest level were the last level's target.
    let mut cur = max_size;
    for _ in first_non_empty..n - 1 {
        cur /= mult;
    }
    let base_min = base_max / mult;
    let mut base = first_non_empty;
    let base_size = if cur <= base_min {
        base_min + 1
    } else {
        while base > 1 && cur > base_max {
            base -= 1;
            cur /= mult;
        }
        if cur > base_max {
            base_max
        } else {
            cur.max(1)
        }
    };
    let mut size = base_size;
    for (l, target) in targets.iter_mut().enumerate().skip(1) {
        if l > base {
            size = size.saturating_mul(mult);
        }
        // Levels above the base get the base target (they are empty); none is set below
        // the base maximum, so the tree never narrows below L0.
        *target = size.max(base_max);
    }
    (base, targets)
}

/// RocksDB's `EstimateCompactionBytesNeeded` for leveled compaction: L0's bytes once it is at
/// its trigger (with the base level's), then down the levels, each level's excess over its
/// target (with what comes down from above) times the fan-out to the next level plus one.
pub(super) fn compaction_needed_bytes(opts: &DbOptions, st: &State) -> u64 {
    let sizes = level_sizes(st);
    let (base, targets) = level_targets(opts, &sizes);
    let n = sizes.len();
    let l0_triggered =
        st.levels[0].len() >= opts.level0_trigger || sizes[0] >= opts.max_bytes_for_level_base;
    let mut needed = if l0_triggered { sizes[0] } else { 0 };
    let mut down = needed;
    for l in base..n.saturating_sub(1) {
        if l == base && l0_triggered {
            needed += sizes[l];
        }
        let size = sizes[l] + down;
        down = 0;
        if size > targets[l] {
            down = size - targets[l];
            let next = sizes[l + 1];
            if next > 0 {
                needed += (down as f64 * (next as f64 / size as f64 + 1.0)) as u64;
            }
        }
    }
    needed
}

/// Bytes of the tables no deeper table overlaps (RocksDB's bottommost files; an L0 table
/// also overlapping no older L0 table).
pub(super) fn bottommost_bytes(st: &State) -> u64 {
    let overlaps =
        |a: &super::Sst, b: &super::Sst| !(a.largest < b.smallest || a.smallest > b.largest);
    // Levels below L0 are sorted and disjoint: the only file of one that may overlap `f` is
    // the first whose largest key is not below f's smallest (a binary search, so this stays
    // O(files · levels · log files): it is asked at every version change).
    let level_overlaps = |l: usize, f: &super::Sst| {
        let files = &st.levels[l];
        if l == 0 {
            return files.iter().any(|g| overlaps(f, g));
        }
        let i = files.partition_point(|g| g.largest < f.smallest);
        files.get(i).is_some_and(|g| overlaps(f, g))
    };
    let mut total = 0;
    for (l, files) in st.levels.iter().enumerate() {
        for (i, f) in files.iter().enumerate() {
            // L0 is newest first: the older L0 tables come after it.
            let older_l0 = l == 0 && files[i + 1..].iter().any(|g| overlaps(f, g));
            let deeper = (l + 1..st.levels.len()).any(|m| level_overlaps(m, f));
            if !older_l0 && !deeper {
                total += f.size;
            }
        }
    }
    total
}

/// A file an edit adds: level, number, size, smallest and largest user key.
pub(super) type NewFile = (u32, u64, u64, Vec<u8>, Vec<u8>);

/// What a MANIFEST records (RocksDB's VersionEdit, own tags).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Edit {
    pub(super) log_number: Option<u64>,
    pub(super) next_file: Option<u64>,
    pub(super) last_seq: Option<u64>,
    pub(super) added: Vec<NewFile>,
    pub(super) deleted: Vec<(u32, u64)>,
}

impl Edit {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        let mut field = |tag: u64, v: u64| {
            put_varint(&mut b, tag);
            put_varint(&mut b, v);
        };
        if let Some(v) = self.log_number {
            field(2, v);
        }
        if let Some(v) = self.next_file {
            field(3, v);
        }
        if let Some(v) = self.last_seq {
            field(4, v);
        }
        for &(level, number) in &self.deleted {
            put_varint(&mut b, 6);
            put_varint(&mut b, level as u64);
            put_varint(&mut b, number);
        }
        for (level, number, size, lo, hi) in &self.added {
            put_varint(&mut b, 7);
            put_varint(&mut b, *level as u64);
            put_varint(&mut b, *number);
            put_varint(&mut b, *size);
            put_varint(&mut b, lo.len() as u64);
            b.extend_from_slice(lo);
            put_varint(&mut b, hi.len() as u64);
            b.extend_from_slice(hi);
        }
        b
    }

    pub(super) fn decode(b: &[u8]) -> Option<Edit> {
        let mut e = Edit::default();
        let mut at = 0;
        let v = |at: &mut usize| -> Option<u64> {
            let (x, n) = get_varint(b.get(*at..)?)?;
            *at += n;
            Some(x)
        };
        while at < b.len() {
            match v(&mut at)? {
                2 => e.log_number = Some(v(&mut at)?),
                3 => e.next_file = Some(v(&mut at)?),
                4 => e.last_seq = Some(v(&mut at)?),
                6 => {
                    let level = u32::try_from(v(&mut at)?).ok()?;
                    e.deleted.push((level, v(&mut at)?));
                }
                7 => {
                    let level = u32::try_from(v(&mut at)?).ok()?;
                    let (number, size) = (v(&mut at)?, v(&mut at)?);
                    let bytes = |at: &mut usize| -> Option<Vec<u8>> {
                        let n = usize::try_from(v(at)?).ok()?;
                        let s = b.get(*at..at.checked_add(n)?)?.to_vec();
                        *at += n;
                        Some(s)
                    };
                    let lo = bytes(&mut at)?;
                    let hi = bytes(&mut at)?;
                    e.added.push((level, number, size, lo, hi));
                }
                _ => return None,
            }
        }
        Some(e)
    }
}

impl Inner {
    /// Write a version edit to the MANIFEST, unless an earlier failure stopped the store: then
    /// the durable version must stay as it is. An edit whose write or sync fails may be durable
    /// all the same (the file system may hold it), while the version in memory lacks it; edits
    /// made after it from that version could contradict it (torture seed 768: a compaction
    /// output landed beside an overlapping table of the ghost edit, and reads found the older
    /// one), so the failure stops the store at once.
    pub(super) async fn log_edit(&self, st: &mut State, edit: &Edit) -> Result<(), DbError> {
        self.check_bg()?;
        let mut rec = Vec::new();
        st.manifest_log.add(&edit.encode(), &mut rec);
        let wrote = match st.manifest.append(&rec).await {
            Ok(()) => st.manifest.sync().await,
            Err(e) => Err(e),
        };
        wrote.map_err(|e| self.failed_write(Stopper::ManifestWrite, e.into()))
    }

    pub(super) fn update_level_stats(&self, st: &State) {
        let mut s = self.stats.borrow_mut();
        s.memtable_bytes = st.mem.bytes() + st.imm_bytes();
        drop(s);
        self.update_speedup(st);
        let mut s = self.stats.borrow_mut();
        s.index_filter_bytes = st
            .levels
            .iter()
            .flatten()
            .map(|f| f.table.index_and_filter_bytes())
            .sum();
        s.l0_files = st.levels[0].len();
        s.level_files = st.levels.iter().map(Vec::len).collect();
        s.level_bytes = level_sizes(st);
    }

    /// The level L0 compacts into and the target size of each level (index 0 unused).
    pub(super) fn level_targets(&self, st: &State) -> (usize, Vec<u64>) {
        level_targets(&self.opts, &level_sizes(st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_level_targets_follow_the_largest_level() {
        let opts = DbOptions::default(); // base 256 MiB, multiplier 10, 7 levels
        const M: u64 = 1 << 20;
        // Empty tree: L0 compacts into the last level.
        assert_eq!(level_targets(&opts, &[10 * M, 0, 0, 0, 0, 0, 0]).0, 6);
        // 1 GiB in L6: L5's share would be 102 MiB, under the 256 MiB base: L0 goes to L5.
        let (base, t) = level_targets(&opts, &[0, 0, 0, 0, 0, 0, 1024 * M]);
        assert_eq!(base, 5);
        // (Sizes are divided down and multiplied back in whole bytes, as RocksDB does.)
        let near = |a: u64, b: u64| a.abs_diff(b) <= 1000;
        assert_eq!(t[5], 256 * M, "never below the base size");
        assert!(near(t[6], 1024 * M), "{t:?}");
        // 30 GiB in L6: L5 3 GiB, L4 307 MiB, L3 31 MiB fits the base: base L3.
        let g30 = 30 * 1024 * M;
        let (base, t) = level_targets(&opts, &[0, 0, 0, 0, 0, 0, g30]);
        assert_eq!(base, 3);
        assert_eq!(t[3], 256 * M);
        assert!(
            near(t[4], g30 / 100) && near(t[5], g30 / 10) && near(t[6], g30),
            "{t:?}"
        );
        // A tiny last level keeps its level as the base.
        assert_eq!(level_targets(&opts, &[0, 0, 0, 0, 0, 0, M]).0, 6);
        // Static sizes: L1 256 MiB, L2 2.5 GiB ...
        let stat = DbOptions {
            level_compaction_dynamic_level_bytes: false,
            ..DbOptions::default()
        };
        let (base, t) = level_targets(&stat, &[0; 7]);
        assert_eq!((base, t[1], t[2]), (1, 256 * M, 2560 * M));
    }
}
