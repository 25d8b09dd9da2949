//! Leveled compaction: the level to compact next by RocksDB's scores, and one compaction
//! (a trivial move, or inputs read from the device, merged and written as new tables).

use std::collections::BTreeSet;
use std::rc::Rc;

use super::super::key::{self, ValueType};
use super::merge::InputSource;
use super::tables::{FileHint, TableWriter};
use super::version::{level_sizes, level_targets, Edit};
use super::{smallest_head, sst_name, Corruption, DbError, Inner, Running, Sst, State};
use crate::zonefs::plus::{JobKind, WriteClass};
use crate::zonefs::Lifetime;

/// A compaction picked (and marked as running): from `level` into `out_level`, the inputs and
/// the output level's files they overlap, by number.
pub(super) struct Picked {
    pub(super) id: u64,
    level: usize,
    out_level: usize,
    inputs: Vec<u64>,
    next_inputs: Vec<u64>,
}

/// The smallest and largest user key of these files (level, numbers).
fn key_range(st: &State, sets: &[(usize, &Vec<u64>)]) -> (Vec<u8>, Vec<u8>) {
    let files = || {
        sets.iter()
            .flat_map(|&(l, set)| st.levels[l].iter().filter(move |f| set.contains(&f.number)))
    };
    let lo = files()
        .map(|f| f.smallest.clone())
        .min()
        .unwrap_or_default();
    let hi = files().map(|f| f.largest.clone()).max().unwrap_or_default();
    (lo, hi)
}

/// The files of `out_level` that the files `inputs` of `level` overlap, in level order; None
/// when one of them is in `busy`, or the range they span with the inputs overlaps that of a
/// running compaction (other than `me`) into `out_level`.
fn free_overlap(
    st: &State,
    busy: &BTreeSet<u64>,
    out_level: usize,
    inputs: &[u64],
    level: usize,
    me: Option<u64>,
) -> Option<Vec<u64>> {
    let ins: Vec<u64> = inputs.to_vec();
    let (lo, hi) = key_range(st, &[(level, &ins)]);
    let mut next = Vec::new();
    let (mut all_lo, mut all_hi) = (lo.clone(), hi.clone());
    // The output level (below L0) is sorted and disjoint: the files overlapping [lo, hi]
    // are consecutive, from the first whose largest key is not below lo.
    let files = &st.levels[out_level];
    debug_assert!(out_level > 0);
    let first = files.partition_point(|g| g.largest.as_slice() < lo.as_slice());
    for g in &files[first..] {
        if g.smallest.as_slice() > hi.as_slice() {
            break;
        }
        if busy.contains(&g.number) {
            return None;
        }
        all_lo = all_lo.min(g.smallest.clone());
        all_hi = all_hi.max(g.largest.clone());
        next.push(g.number);
    }
    let clash = st.running.iter().any(|r| {
        Some(r.id) != me
            && r.out_level == out_level
            && !(r.hi.as_slice() < all_lo.as_slice() || r.lo.as_slice() > all_hi.as_slice())
    });
    (!clash).then_some(next)
}

impl Inner {
    /// The compaction to run next, marked as running: levels by score (the highest first,
    /// RocksDB 8.x's `ComputeCompactionScore` for leveled compaction), the first whose inputs
    /// are free. L0: file count over the trigger; with static sizes also bytes over the base
    /// target; with dynamic sizes at least 1.01 once L0 holds the base target, and L0 over
    /// the base level's size when it outgrows it, scaled by 10 above 1. Deeper levels: bytes
    /// over their target; with dynamic sizes, a level at or over its target divides by its
    /// target plus the bytes bound to come down from above and scales by 10, so a level with
    /// much incoming data waits for it. Files being compacted count in no score.
    ///
    /// Beside running compactions (RocksDB's `LevelCompactionBuilder`): one L0 compaction at a
    /// time; no input, and no file of the output level the inputs overlap, may be in a running
    /// compaction; and the output range may not overlap that of a running compaction into the
    /// same level.
    pub(super) async fn pick_compaction(&self) -> Option<Picked> {
        const SCORE_SCALE: f64 = 10.0;
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        let n = st.levels.len();
        let busy: BTreeSet<u64> = st
            .running
            .iter()
            .flat_map(|r| r.files.iter().copied())
            .collect();
        let sizes = level_sizes(st);
        let free: Vec<u64> = st
            .levels
            .iter()
            .map(|l| {
                l.iter()
                    .filter(|f| !busy.contains(&f.number))
                    .map(|f| f.size)
                    .sum()
            })
            .collect();
        let (base, targets) = level_targets(&self.opts, &sizes);
        let dynamic = self.opts.level_compaction_dynamic_level_bytes;
        let base_target = self.opts.max_bytes_for_level_base.max(1);
        let mut downcompact = 0f64;
        let mut scored: Vec<(f64, usize)> = Vec::new();
        for l in 0..n - 1 {
            let score = if l == 0 {
                let files = st.levels[0]
                    .iter()
                    .filter(|f| !busy.contains(&f.number))
                    .count();
                let mut score = files as f64 / self.opts.level0_trigger.max(1) as f64;
                if !dynamic {
                    score = score.max(free[0] as f64 / base_target as f64);
                } else {
                    if free[0] >= base_target {
                        score = score.max(1.01);
                    }
                    if free[0] > targets[base] {
                        score = score.max(free[0] as f64 / sizes[base].max(targets[base]) as f64);
                    }
                    if score > 1.0 {
                        score *= SCORE_SCALE;
                    }
                }
                downcompact += free[0] as f64;
                score
            } else if !dynamic || free[l] < targets[l] {
                free[l] as f64 / targets[l].max(1) as f64
            } else {
                let score = free[l] as f64 / (targets[l] as f64 + downcompact) * SCORE_SCALE;
                downcompact += (free[l] - targets[l]) as f64;
                score
            };
            if score >= 1.0 {
                scored.push((score, l));
            }
        }
        // The highest score first; on a tie the upper level.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, level) in scored {
            let out_level = if level == 0 { base } else { level + 1 };
            let picked = if level == 0 {
                if st.running.iter().any(|r| r.level == 0) {
                    continue;
                }
                let inputs: Vec<u64> = st.levels[0].iter().map(|f| f.number).collect();
                free_overlap(st, &busy, out_level, &inputs, 0, None).map(|next| (inputs, next))
            } else {
                // The file whose overlap with the level below is smallest relative to its size
                // (kMinOverlappingRatio), among those that can go now.
                let next_files = &st.levels[out_level];
                (0..st.levels[level].len())
                    .filter_map(|i| {
                        let f = &st.levels[level][i];
                        if busy.contains(&f.number) {
                            return None;
                        }
                        let next = free_overlap(st, &busy, out_level, &[f.number], level, None)?;
                        let o: u64 = next_files
                            .iter()
                            .filter(|g| next.contains(&g.number))
                            .map(|g| g.size)
                            .sum();
                        Some(((o * 1024 / f.size.max(1), i), next))
                    })
                    .min_by_key(|(k, _)| *k)
                    .map(|((_, i), next)| (vec![st.levels[level][i].number], next))
            };
            let Some((inputs, next_inputs)) = picked else {
                continue;
            };
            let id = st.next_compaction;
            st.next_compaction += 1;
            {
                let mut s = self.stats.borrow_mut();
                s.max_running_compactions = s.max_running_compactions.max(st.running.len() + 1);
                for r in &st.running {
                    s.concurrent_compaction_levels.insert((level, r.level));
                }
            }
            let (lo, hi) = key_range(st, &[(level, &inputs), (out_level, &next_inputs)]);
            st.running.push(Running {
                id,
                level,
                out_level,
                files: inputs.iter().chain(&next_inputs).copied().collect(),
                lo,
                hi,
            });
            self.update_speedup(st);
            return Some(Picked {
                id,
                level,
                out_level,
                inputs,
                next_inputs,
            });
        }
        None
    }

    /// Run a picked compaction: a trivial move, or its inputs read from the device, merged
    /// and written as tables of the output level; then its edit is logged and installed.
    pub(super) async fn compact(&self, picked: Picked) -> Result<(), DbError> {
        let began = self.fs.io().sim().now().as_ns();
        // The inputs are chosen under the lock (they are marked as being compacted, so no
        // other worker changes them while the merge reads them and writes the outputs
        // without it).
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        let (base, _) = self.level_targets(st);
        let Picked {
            id,
            level,
            out_level,
            inputs: mut input_set,
            next_inputs: mut next_set,
        } = picked;
        if level == 0 {
            // Every L0 file now, with those flushed since the pick, unless their overlap
            // below is in another compaction.
            let others: BTreeSet<u64> = st
                .running
                .iter()
                .filter(|r| r.id != id)
                .flat_map(|r| r.files.iter().copied())
                .collect();
            let all: Vec<u64> = st.levels[0].iter().map(|f| f.number).collect();
            if all.len() != input_set.len() {
                if let Some(next) = free_overlap(st, &others, out_level, &all, 0, Some(id)) {
                    input_set = all;
                    next_set = next;
                    let (lo, hi) = key_range(st, &[(0, &input_set), (out_level, &next_set)]);
                    let r = st.running.iter_mut().find(|r| r.id == id).expect("running");
                    r.files = input_set.iter().chain(&next_set).copied().collect();
                    r.lo = lo;
                    r.hi = hi;
                }
            }
        }
        let index_of = |st: &State, l: usize, set: &[u64]| -> Vec<usize> {
            (0..st.levels[l].len())
                .filter(|&i| set.contains(&st.levels[l][i].number))
                .collect()
        };
        let inputs = index_of(st, level, &input_set);
        let next_inputs = index_of(st, out_level, &next_set);
        // Trivial move (RocksDB's): one input file that overlaps nothing below changes level
        // in the MANIFEST only, without being rewritten.
        if inputs.len() == 1 && next_inputs.is_empty() {
            // Logged before the version in memory changes: a failed MANIFEST write must leave
            // the table where reads find it (it was taken out first, and a failed write lost
            // it from the version: reads then found older values below; torture seed 1103).
            let f = &st.levels[level][inputs[0]];
            let edit = Edit {
                added: vec![(
                    out_level as u32,
                    f.number,
                    f.size,
                    f.smallest.clone(),
                    f.largest.clone(),
                )],
                deleted: vec![(level as u32, f.number)],
                ..Edit::default()
            };
            self.log_edit(st, &edit).await?;
            let f = st.levels[level].remove(inputs[0]);
            let next = &mut st.levels[out_level];
            next.push(f);
            next.sort_by(|a, b| a.smallest.cmp(&b.smallest));
            self.stats.borrow_mut().trivial_moves += 1;
            st.running.retain(|r| r.id != id);
            self.update_level_stats(st);
            return Ok(());
        }
        // Output files cut at the target size, with ZenFS lifetime hints by level
        // (RocksDB's CalculateSSTWriteHint: Medium up to the base level, then one step longer
        // per level below it).
        let lifetime = match out_level.saturating_sub(base) {
            0 => Lifetime::Medium,
            1 => Lifetime::Long,
            _ => Lifetime::Extreme,
        };
        // ZenFS+ learns the job and the output level at file creation (§IV-B, IV-C).
        let hint = FileHint {
            lifetime,
            class: WriteClass {
                kind: JobKind::Compaction,
                level: out_level as u32,
            },
        };
        let ins: Vec<Rc<Sst>> = inputs
            .iter()
            .map(|&i| st.levels[level][i].clone())
            .collect();
        let next_ins: Vec<Rc<Sst>> = next_inputs
            .iter()
            .map(|&i| st.levels[out_level][i].clone())
            .collect();
        let input_numbers: Vec<(u32, u64)> = ins
            .iter()
            .map(|f| (level as u32, f.number))
            .chain(next_ins.iter().map(|f| (out_level as u32, f.number)))
            .collect();
        // Raw bytes the inputs decompress to (a table loaded at open has no recorded shape:
        // its file size stands in, an underestimate by the compression ratio). Files are cut
        // at the target *file* size, as RocksDB cuts them: raw bytes scaled by the inputs'
        // compression.
        let read: u64 = ins.iter().chain(&next_ins).map(|f| f.size).sum();
        let input_raw: u64 = ins
            .iter()
            .chain(&next_ins)
            .map(|f| if f.shape.1 > 0 { f.shape.1 } else { f.size })
            .sum();
        let raw_target = (self.opts.target_file_size as u128 * input_raw.max(1) as u128
            / read.max(1) as u128) as u64;
        // A deletion may be dropped when no deeper level of this version can hold an older
        // version of its key.
        let deeper: Vec<(Vec<u8>, Vec<u8>)> = st.levels[out_level + 1..]
            .iter()
            .flatten()
            .map(|f| (f.smallest.clone(), f.largest.clone()))
            .collect();
        drop(guard);
        // The merge, streamed: each input read front to back as the merge reaches it (an L0
        // file, or the input of a deeper level, is a source of its own; the output level's
        // files one source), outputs written as they fill.
        let mut sources: Vec<InputSource> =
            ins.into_iter().map(|f| InputSource::new(vec![f])).collect();
        if !next_ins.is_empty() {
            sources.push(InputSource::new(next_ins));
        }
        let merged = self
            .merge_into_tables(&mut sources, &deeper, raw_target, hint)
            .await;
        drop(sources);
        let outputs = merged?;
        let written: u64 = outputs.iter().map(|f| f.size).sum();
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        // Log the edit, then install it and delete the inputs.
        let edit = Edit {
            next_file: Some(self.next_file.get()),
            last_seq: Some(st.last_seq),
            added: outputs
                .iter()
                .map(|f| {
                    (
                        out_level as u32,
                        f.number,
                        f.size,
                        f.smallest.clone(),
                        f.largest.clone(),
                    )
                })
                .collect(),
            deleted: input_numbers.clone(),
            ..Edit::default()
        };
        self.log_edit(st, &edit).await?;
        // Remove the inputs by number (the flusher may have added L0 files meanwhile); they
        // are deleted once no reader holds them.
        let dead: Vec<u64> = input_numbers.iter().map(|&(_, n)| n).collect();
        st.levels[out_level].extend(outputs.into_iter().map(Rc::new));
        st.levels[out_level].sort_by(|a, b| a.smallest.cmp(&b.smallest));
        for l in [level, out_level] {
            let (gone, kept): (Vec<Rc<Sst>>, Vec<Rc<Sst>>) = std::mem::take(&mut st.levels[l])
                .into_iter()
                .partition(|f| dead.contains(&f.number));
            st.levels[l] = kept;
            for f in gone {
                self.cache.borrow_mut().forget_file(f.number);
                self.doomed.borrow_mut().insert(f.number, f);
            }
        }
        st.running.retain(|r| r.id != id);
        self.delete_retired_tables().await?;
        let mut s = self.stats.borrow_mut();
        s.compactions += 1;
        s.compaction_read_bytes += read;
        s.compaction_written_bytes += written;
        let now = self.fs.io().sim().now().as_ns();
        s.series.compaction(began, now, read, written);
        drop(s);
        self.update_level_stats(st);
        Ok(())
    }
}

impl Inner {
    /// Merge the sources into tables of about `raw_target` key and value bytes each: the
    /// newest version of each user key, deletions dropped where no deeper level (`deeper`:
    /// their key ranges) can hold an older version. Each output's CPU (decompressing the
    /// input blocks read for it, merging, compressing its blocks) is charged when it is
    /// finished.
    async fn merge_into_tables(
        &self,
        sources: &mut [InputSource],
        deeper: &[(Vec<u8>, Vec<u8>)],
        raw_target: u64,
        hint: FileHint,
    ) -> Result<Vec<Sst>, DbError> {
        let mut out: Option<TableWriter> = None;
        let mut outputs = Vec::new();
        let merged = self
            .merge_loop(sources, deeper, raw_target, hint, &mut out, &mut outputs)
            .await;
        if let Err(e) = merged {
            // Nothing of a failed compaction stays: its open output (and the zone it holds)
            // and the outputs it finished go.
            if let Some(w) = out {
                w.abandon().await;
            }
            for f in outputs {
                let _ = self.fs.delete(&sst_name(f.number)).await;
            }
            return Err(e);
        }
        Ok(outputs)
    }

    async fn merge_loop(
        &self,
        sources: &mut [InputSource],
        deeper: &[(Vec<u8>, Vec<u8>)],
        raw_target: u64,
        hint: FileHint,
        out: &mut Option<TableWriter>,
        outputs: &mut Vec<Sst>,
    ) -> Result<(), DbError> {
        let deeper_overlap = |k: &[u8]| {
            deeper
                .iter()
                .any(|(lo, hi)| lo.as_slice() <= k && k <= hi.as_slice())
        };
        let mut raw_read = 0u64;
        let mut heads = Vec::with_capacity(sources.len());
        for s in sources.iter_mut() {
            heads.push(s.next_entry(self, &mut raw_read).await?);
        }
        // The last user key kept or dropped (one buffer, not one allocation per entry).
        let mut last_user: Vec<u8> = Vec::new();
        let mut any = false;
        let mut raw_charged = 0u64;
        while let Some(min) = smallest_head(&heads) {
            let (k, v) = heads[min].take().expect("some");
            heads[min] = sources[min].next_entry(self, &mut raw_read).await?;
            let (uk, _, t) =
                key::parse(&k).ok_or_else(|| DbError::from(Corruption::InternalKeyInSst))?;
            if any && last_user == uk {
                continue; // an older version, shadowed
            }
            any = true;
            last_user.clear();
            last_user.extend_from_slice(uk);
            if t == ValueType::Deletion && !deeper_overlap(uk) {
                continue;
            }
            if out.as_ref().is_some_and(|w| w.added_bytes() >= raw_target) {
                let sst = out.take().expect("some").finish().await?;
                self.output_cpu(&sst, raw_read - raw_charged).await;
                raw_charged = raw_read;
                outputs.push(sst);
            }
            if out.is_none() {
                let number = self.new_file_number();
                *out = Some(TableWriter::new(&self.fs, &self.opts, number, hint).await?);
            }
            out.as_mut().expect("some").add(&k, &v).await?;
        }
        if let Some(w) = out.take() {
            let sst = w.finish().await?;
            self.output_cpu(&sst, raw_read - raw_charged).await;
            outputs.push(sst);
        } else if raw_read > raw_charged {
            self.build_cpu(self.decompress_ns(raw_read - raw_charged), &[])
                .await;
        }
        Ok(())
    }

    /// CPU of decompressing `raw` bytes of input blocks.
    fn decompress_ns(&self, raw: u64) -> u64 {
        self.opts
            .compression
            .profile()
            .map_or(0, |p| raw.div_ceil(4096) * p.decompress.latency_ns(4096))
    }

    /// CPU of one compaction output: the input blocks decompressed for it (`raw` bytes), the
    /// merge of its entries and the compression of its blocks.
    async fn output_cpu(&self, sst: &Sst, raw: u64) {
        self.count_compressed(sst);
        self.build_cpu(self.decompress_ns(raw), &[sst.shape]).await;
    }
}
