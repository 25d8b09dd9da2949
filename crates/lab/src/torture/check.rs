//! What `znslab torture` checks: reads and scans before the cut against what the writers
//! acknowledged, and after power-on legal zones, raw zones' patterns, the file system and the
//! store: every synced write back, nothing never written, and the store a prefix of the
//! acknowledged batches in WAL order.

use std::collections::BTreeMap;
use std::rc::Rc;

use device::{Controller, ZoneState};
use host::lsm::db::DbOptions;
use sim::Sim;

use crate::stack::{self, FsStart, Stack};

use super::raw;
use super::store::{key, key_number, show, was_issued, Write, KEYS};

/// What one writer did before the cut. Writers own disjoint keys (writer `w` of `n` the keys
/// `k % n == w`), so each key's history is one writer's, in that writer's order.
#[derive(Default)]
pub(crate) struct WriterLog {
    /// Its acknowledged writes, in order.
    pub(crate) acked: Vec<Acked>,
    /// Its writes up to here were acknowledged by (or before) a synced write of its own.
    pub(crate) synced: usize,
    /// Its batch in flight at the cut (issued, not acknowledged): it may or may not persist.
    pub(crate) pending: Vec<Write>,
}

/// One acknowledged write, with its sequence number (its place in the WAL among every
/// writer's) and whether it ends its batch.
pub(crate) struct Acked {
    pub(crate) key: u64,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) seq: u64,
    pub(crate) ends_batch: bool,
}

impl WriterLog {
    /// Its batch in flight was acknowledged at sequence `seq`, synced or not.
    pub(crate) fn acknowledge_pending(&mut self, seq: u64, sync: bool) {
        let writes = std::mem::take(&mut self.pending);
        let n = writes.len() as u64;
        self.acked
            .extend((0..).zip(writes).map(|(i, (key, value))| Acked {
                key,
                value,
                seq: seq + i,
                ends_batch: i + 1 == n,
            }));
        if sync {
            self.synced = self.acked.len();
        }
    }

    /// Per key of this writer: the values it may hold after power-on — every value written
    /// from its last synced write on (the synced one included, and the batch in flight, never
    /// synced), or, with no synced write, any written value or none at all.
    fn allowed_values<'a>(&'a self, allowed: &mut BTreeMap<u64, Vec<Option<&'a Vec<u8>>>>) {
        let mut last_synced: BTreeMap<u64, usize> = BTreeMap::new();
        for (i, a) in self.acked[..self.synced].iter().enumerate() {
            last_synced.insert(a.key, i);
        }
        let writes = self.acked.iter().map(|a| (a.key, &a.value));
        for (i, (k, v)) in writes
            .chain(self.pending.iter().map(|(k, v)| (*k, v)))
            .enumerate()
        {
            let from = last_synced.get(&k).copied();
            let a = allowed.entry(k).or_insert_with(|| {
                if from.is_none() {
                    vec![None]
                } else {
                    Vec::new()
                }
            });
            if from.is_none_or(|f| i >= f) {
                a.push(v.as_ref());
            }
        }
    }
}

/// After power-on the store must hold what a prefix of the acknowledged batches left, in
/// their WAL order (sequence numbers), a prefix reaching at least the newest synced batch: the
/// WAL is written in order and recovered to a point in time (RocksDB's point-in-time recovery),
/// so a batch never comes back without every batch before it, nor in part. A key holding a
/// value of its writer's batch in flight at the cut fits any prefix (that batch's place in
/// the order is unknown). `observed`: every key's value after power-on.
pub(crate) fn check_prefix(
    logs: &[WriterLog],
    observed: &BTreeMap<u64, Option<Vec<u8>>>,
) -> Result<(), String> {
    let writers = logs.len().max(1) as u64;
    // Every acknowledged write in WAL order.
    let mut ops: Vec<&Acked> = logs.iter().flat_map(|l| &l.acked).collect();
    ops.sort_by_key(|a| a.seq);
    let synced = logs
        .iter()
        .filter(|l| l.synced > 0)
        .map(|l| l.acked[l.synced - 1].seq)
        .max();
    let seen = |k: u64| observed.get(&k).and_then(|v| v.as_ref());
    let in_flight = |k: u64| {
        logs[(k % writers) as usize]
            .pending
            .iter()
            .any(|(pk, pv)| *pk == k && pv.as_ref() == seen(k))
    };
    // Each key's value after the prefix so far (absent: never written).
    let mut state: BTreeMap<u64, Option<&Vec<u8>>> = BTreeMap::new();
    let fits = |state: &BTreeMap<u64, Option<&Vec<u8>>>, k: u64| {
        state.get(&k).copied().flatten() == seen(k) || in_flight(k)
    };
    let mut differ = observed.keys().filter(|&&k| !fits(&state, k)).count();
    // The prefix that came closest: (keys that differ, up to which sequence; None: no batch,
    // a prefix only when nothing was synced).
    let mut best = synced.is_none().then_some((differ, None));
    for a in &ops {
        let before = fits(&state, a.key);
        state.insert(a.key, a.value.as_ref());
        match (before, fits(&state, a.key)) {
            (true, false) => differ += 1,
            (false, true) => differ -= 1,
            _ => {}
        }
        if a.ends_batch
            && synced.is_none_or(|s| a.seq >= s)
            && best.is_none_or(|(fewest, _)| differ < fewest)
        {
            best = Some((differ, Some(a.seq)));
        }
    }
    let (fewest, p) = best.unwrap_or((differ, None));
    if fewest == 0 {
        return Ok(());
    }
    // None fits: name a key that differs from the prefix that came closest.
    let mut state: BTreeMap<u64, Option<&Vec<u8>>> = BTreeMap::new();
    for a in ops.iter().take_while(|a| p.is_some_and(|p| a.seq <= p)) {
        state.insert(a.key, a.value.as_ref());
    }
    let k = observed.keys().copied().find(|&k| !fits(&state, k));
    Err(format!(
        "after power-on the store holds no prefix of the acknowledged writes in WAL order \
         ({} writes, the newest synced at sequence {synced:?}): at best, up to sequence {p:?}, \
         {} keys differ{}",
        ops.len(),
        fewest,
        k.map_or(String::new(), |k| format!(
            ", key {k} reads {} where that prefix left {}",
            show(seen(k).map(|v| &v[..])),
            show(state.get(&k).copied().flatten().map(|v| &v[..]))
        ))
    ))
}

/// A writer's scan of 8 from its key `k`: keys in order from `k`; its own keys (`owns`) with
/// their last acknowledged values (`latest`) and none of its live keys in the range missing;
/// other writers' keys with a value they issued.
pub(crate) fn check_scan(
    k: u64,
    got: &[(Vec<u8>, Vec<u8>)],
    latest: &BTreeMap<u64, Option<Vec<u8>>>,
    owns: impl Fn(u64) -> bool,
    issued: &BTreeMap<u64, Vec<Vec<u8>>>,
) -> Result<(), String> {
    let wrong = |what: String| Err(format!("before the cut, a scan from key {k} {what}"));
    let mut last: Option<u64> = None;
    for (kb, v) in got {
        let Some(n) = key_number(kb).filter(|&n| n >= k && last.is_none_or(|l| n > l)) else {
            return wrong(format!("returned key {} out of order", show(Some(kb))));
        };
        let right = if owns(n) {
            latest.get(&n).and_then(|v| v.as_ref()) == Some(v)
        } else {
            was_issued(issued, n, v)
        };
        if !right {
            return wrong(format!(
                "returned key {n} with {}, not its last acknowledged (or an issued) value",
                show(Some(v))
            ));
        }
        last = Some(n);
    }
    // Where a full scan stopped, its own keys beyond were not asked for.
    let end = if got.len() == 8 { last } else { None };
    let missing = latest
        .range(k..)
        .take_while(|(n, _)| end.is_none_or(|e| **n <= e))
        .filter(|(_, v)| v.is_some())
        .map(|(n, _)| *n)
        .find(|n| !got.iter().any(|(kb, _)| key_number(kb) == Some(*n)));
    match missing {
        Some(n) => wrong(format!(
            "missed key {n}, live by an acknowledged write ({} pairs returned)",
            got.len()
        )),
        None => Ok(()),
    }
}

/// What the check after power-on read back.
#[derive(Default)]
pub(crate) struct Checked {
    pub(crate) keys: usize,
    pub(crate) blocks: u64,
    /// The file system was never made: only the device was checked.
    pub(crate) before_mkfs: bool,
}

/// After power-on, every zone is in a state a power-on may leave: empty, closed with its write
/// pointer in range, full, or TL-open (ZNS+: its bitmap and write pointer kept across the
/// power cycle). A conventional namespace has no zones of its own.
pub(crate) fn check_zones(ctl: &Controller) -> Result<(), String> {
    let lay = ctl.layout();
    if ctl.identify().csi != device::CommandSet::Zoned {
        return Ok(());
    }
    for zi in 0..ctl.zone_count() {
        let z = ctl.zone(zi);
        let start = zi as u64 * lay.zone_size_lbas;
        let end = start + lay.zone_capacity_lbas;
        let legal = match z.state {
            ZoneState::Empty => z.wp == start && z.byte_wp == 0,
            _ if z.is_tl_open() => (start..=end).contains(&z.wp),
            // Closed at its start too: an explicitly opened zone nothing was written to yet.
            ZoneState::Closed => {
                (start..end).contains(&z.wp) && z.wp == start + z.byte_wp / lay.lba_bytes
            }
            ZoneState::Full => z.wp == end,
            _ => false,
        };
        let in_range = z.byte_wp <= lay.zone_capacity_lbas * lay.lba_bytes;
        if !legal || !in_range {
            return Err(format!("after power-on, zone {zi} is {z:?}"));
        }
    }
    Ok(())
}

/// Power on the device in the image at `path` and check it against what the workload logged:
/// legal zones; raw zones holding their patterns; or the file system mounting, the store
/// opening, every synced write there and the store a prefix of the WAL order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_power_on(
    path: &std::path::Path,
    seed: u64,
    workload: &str,
    opts: &DbOptions,
    logs: Vec<WriterLog>,
    raw: &[raw::ZoneLog],
    made: bool,
    verbose: bool,
) -> Result<Checked, String> {
    let mut ctl = Controller::open_image(path).map_err(|e| format!("reopening: {e}"))?;
    ctl.power_cycle();

    check_zones(&ctl)?;
    let mut out = Checked::default();
    if workload == "raw" {
        out.blocks = raw::check(&mut ctl, seed, raw)?;
        return Ok(out);
    }
    if !made {
        out.before_mkfs = true;
        return Ok(out);
    }

    // The file system and the store come back; acknowledged writes are checked.
    let sim = Sim::new(seed ^ 0x9e37_79b9);
    let Stack { io, .. } = Stack::new(&sim, ctl, 2);
    let opts = opts.clone();
    out.keys = sim.block_on(async move {
        // On emulated zones the host first finds its zones again on the drive.
        io.recover_emulated_zones()
            .await
            .map_err(|e| format!("recovering the emulated zones: {e}"))?;
        let fs = Rc::new(
            stack::file_system(io, FsStart::Mount)
                .await
                .map_err(|e| format!("mount: {e}"))?,
        );
        if verbose {
            let mut all: Vec<String> = fs.list();
            all.sort();
            eprintln!(
                "files: {}",
                all.iter()
                    .map(|n| format!("{n} {}", fs.size(n).unwrap_or(0)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for name in fs.list() {
                if name.ends_with(".log") {
                    let ex = fs.extents(&name).unwrap_or_default();
                    eprintln!("{name}: size {:?} extents {:?}", fs.size(&name), ex);
                    // What lies in the gaps between consecutive pieces: the length header
                    // a sparse piece would start with.
                    for w in ex.windows(2) {
                        let next = (w[0].start + w[0].len).div_ceil(4096) * 4096;
                        if w[1].start != next + 8 {
                            let mut b = vec![0u8; 4096];
                            let _ = fs.io().read(next, &mut b).await;
                            let len = u64::from_le_bytes(b[..8].try_into().expect("8"));
                            eprintln!("  gap at {next}..{}: header {len}", w[1].start - 8);
                        }
                    }
                }
            }
        }
        let db = stack::store(fs, opts)
            .await
            .map_err(|e| format!("store open: {e}"))?;
        // Per key: the values it may hold now (`WriterLog::allowed_values`).
        let mut allowed: BTreeMap<u64, Vec<Option<&Vec<u8>>>> = BTreeMap::new();
        for l in &logs {
            l.allowed_values(&mut allowed);
        }
        let mut observed = BTreeMap::new();
        for k in 0..KEYS {
            let got = db
                .get(&key(k))
                .await
                .map_err(|e| format!("reading key {k}: {e}"))?;
            observed.insert(k, got.clone());
            let ok = match allowed.get(&k) {
                Some(a) => a.contains(&got.as_ref()),
                None => got.is_none(),
            };
            if !ok {
                let what = got.map_or("nothing".to_string(), |v| {
                    String::from_utf8_lossy(&v[..v.len().min(24)]).into_owned()
                });
                let w = (k % logs.len() as u64) as usize;
                return Err(format!(
                    "key {k} reads {what}: not a value written at or after its last synced write \
                     (its writer {w} of {}: {} writes acknowledged, {} up to a sync)",
                    logs.len(),
                    logs[w].acked.len(),
                    logs[w].synced
                ));
            }
        }
        check_prefix(&logs, &observed)?;
        Ok::<usize, String>(KEYS as usize)
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(k: u64, v: &str) -> (Vec<u8>, Vec<u8>) {
        (key(k), v.as_bytes().to_vec())
    }

    /// Writer 0 of 2 owns the even keys: 0, 2 and 4 live, 6 deleted; writer 1 issued "b1" and
    /// "b3" for keys 1 and 3.
    fn check(got: &[(Vec<u8>, Vec<u8>)]) -> Result<(), String> {
        let latest: BTreeMap<u64, Option<Vec<u8>>> = [
            (0, Some(b"a0".to_vec())),
            (2, Some(b"a2".to_vec())),
            (4, Some(b"a4".to_vec())),
            (6, None),
        ]
        .into();
        let issued: BTreeMap<u64, Vec<Vec<u8>>> =
            [(1, vec![b"b1".to_vec()]), (3, vec![b"b3".to_vec()])].into();
        check_scan(0, got, &latest, |n| n % 2 == 0, &issued)
    }

    #[test]
    fn a_writers_scan_sees_its_own_keys_exactly_and_others_as_issued() {
        let all = [pair(0, "a0"), pair(1, "b1"), pair(2, "a2"), pair(4, "a4")];
        assert_eq!(check(&all), Ok(()));
        // Writer 1's key 3 not written yet, or deleted: not checked.
        assert_eq!(
            check(&[pair(0, "a0"), pair(2, "a2"), pair(4, "a4")]),
            Ok(())
        );
        // Own key with an old value, a missing own key, a deleted key, another writer's key
        // with a value it never issued, keys out of order.
        let stale = [pair(0, "a0"), pair(2, "old"), pair(4, "a4")];
        assert!(check(&stale).unwrap_err().contains("key 2 with old"));
        let missing = [pair(0, "a0"), pair(4, "a4")];
        assert!(check(&missing).unwrap_err().contains("missed key 2"));
        let deleted = [pair(0, "a0"), pair(2, "a2"), pair(4, "a4"), pair(6, "a6")];
        assert!(check(&deleted).unwrap_err().contains("key 6"));
        let foreign = [pair(0, "a0"), pair(1, "zz"), pair(2, "a2"), pair(4, "a4")];
        assert!(check(&foreign).unwrap_err().contains("key 1 with zz"));
        let unordered = [pair(2, "a2"), pair(0, "a0"), pair(4, "a4")];
        assert!(check(&unordered).unwrap_err().contains("out of order"));
        // A full scan (8 pairs) stops at its last key: own keys beyond it are not missing.
        let full: Vec<_> = (0..8).map(|i| pair(i * 2 + 1, "x")).collect();
        let issued: BTreeMap<u64, Vec<Vec<u8>>> =
            (0..8).map(|i| (i * 2 + 1, vec![b"x".to_vec()])).collect();
        let latest: BTreeMap<u64, Option<Vec<u8>>> = [(20, Some(b"a".to_vec()))].into();
        assert_eq!(
            check_scan(1, &full, &latest, |n| n % 2 == 0, &issued),
            Ok(())
        );
        let latest: BTreeMap<u64, Option<Vec<u8>>> = [(10, Some(b"a".to_vec()))].into();
        assert!(check_scan(1, &full, &latest, |n| n % 2 == 0, &issued).is_err());
    }

    #[test]
    fn after_power_on_the_store_holds_a_prefix_of_the_wal_order() {
        let v = |s: &str| Some(s.as_bytes().to_vec());
        // Two writers (even and odd keys). Writer 0: batch {k0=a, k2=b} at sequences 1-2,
        // then k0=c at 5. Writer 1: k1=x at 3, k3=y at 4 (separate batches); its k5=z in
        // flight at the cut.
        let at = |key, value: &str, seq, ends_batch| Acked {
            key,
            value: v(value),
            seq,
            ends_batch,
        };
        let logs = |synced0: usize| {
            vec![
                WriterLog {
                    acked: vec![
                        at(0, "a", 1, false),
                        at(2, "b", 2, true),
                        at(0, "c", 5, true),
                    ],
                    synced: synced0,
                    pending: vec![],
                },
                WriterLog {
                    acked: vec![at(1, "x", 3, true), at(3, "y", 4, true)],
                    synced: 0,
                    pending: vec![(5, v("z"))],
                },
            ]
        };
        let seen = |vals: [Option<Vec<u8>>; 6]| -> BTreeMap<u64, Option<Vec<u8>>> {
            vals.into_iter()
                .enumerate()
                .map(|(k, v)| (k as u64, v))
                .collect()
        };
        let ok = |synced0, vals| check_prefix(&logs(synced0), &seen(vals));
        // Nothing, the first batch, up to k1, up to k3, everything: prefixes.
        assert_eq!(ok(0, [None, None, None, None, None, None]), Ok(()));
        assert_eq!(ok(0, [v("a"), None, v("b"), None, None, None]), Ok(()));
        assert_eq!(ok(0, [v("a"), v("x"), v("b"), v("y"), None, None]), Ok(()));
        assert_eq!(ok(0, [v("c"), v("x"), v("b"), v("y"), None, None]), Ok(()));
        // The batch in flight fits anywhere.
        assert_eq!(ok(0, [v("a"), None, v("b"), None, None, v("z")]), Ok(()));
        // A later write without an earlier one (each key alone would pass), half a batch,
        // and less than the newest synced write: no prefix.
        let e = ok(0, [None, v("x"), None, None, None, None]).unwrap_err();
        assert!(e.contains("no prefix"), "{e}");
        assert!(ok(0, [v("c"), None, v("b"), v("y"), None, None]).is_err());
        assert!(ok(0, [v("a"), None, None, None, None, None]).is_err());
        assert!(ok(2, [None, None, None, None, None, None]).is_err());
        assert_eq!(ok(2, [v("a"), None, v("b"), None, None, None]), Ok(()));
    }

    #[test]
    fn after_power_on_a_key_may_hold_what_came_from_its_writers_last_sync_on() {
        let w = |k, v: &str| (k, Some(v.as_bytes().to_vec()));
        let acked = [w(0, "1"), w(0, "2"), w(2, "3"), (0, None), w(0, "4")];
        let log = WriterLog {
            acked: (0..)
                .zip(acked)
                .map(|(seq, (key, value))| Acked {
                    key,
                    value,
                    seq,
                    ends_batch: true,
                })
                .collect(),
            synced: 3,
            pending: vec![w(2, "5"), w(4, "6")],
        };
        let mut allowed = BTreeMap::new();
        log.allowed_values(&mut allowed);
        let vals = |k| {
            allowed[&k]
                .iter()
                .map(|v: &Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned()))
                .collect::<Vec<_>>()
        };
        let s = |v: &str| Some(v.to_string());
        // Key 0: synced at "2"; the later delete and "4" may or may not have landed.
        assert_eq!(vals(0), [s("2"), None, s("4")]);
        // Key 2: synced at "3"; the batch in flight may have landed.
        assert_eq!(vals(2), [s("3"), s("5")]);
        // Key 4: never synced, only in flight: nothing or its value.
        assert_eq!(vals(4), [None, s("6")]);
    }
}
