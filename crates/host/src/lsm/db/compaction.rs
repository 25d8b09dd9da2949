//! Leveled compaction: the level to compact next by RocksDB's scores, and one compaction
//! (a trivial move, or inputs read from the device, merged and written as new tables).

use super::super::key::{self, ValueType};
use super::super::sst::CcChunk;
use super::tables::dr_region;
use super::version::{level_sizes, level_targets, Edit};
use super::{sst_name, Corruption, DbError, Inner, Sst};
use crate::zonefs::Lifetime;

impl Inner {
    /// The level to compact next: the highest score ≥ 1, as RocksDB 8.x's
    /// `ComputeCompactionScore` for leveled compaction. L0: file count over the trigger; with
    /// static sizes also bytes over the base target; with dynamic sizes at least 1.01 once L0
    /// holds the base target, and L0 over the base level's size when it outgrows it, scaled
    /// by 10 above 1. Deeper levels: bytes over their target; with dynamic sizes, a level at
    /// or over its target divides by its target plus the bytes bound to come down from above
    /// and scales by 10, so a level with much incoming data waits for it.
    pub(super) async fn pick_compaction(&self) -> Option<usize> {
        const SCORE_SCALE: f64 = 10.0;
        let st = self.st.lock().await;
        let n = st.levels.len();
        let sizes = level_sizes(&st);
        let (base, targets) = level_targets(&self.opts, &sizes);
        let dynamic = self.opts.level_compaction_dynamic_level_bytes;
        let base_target = self.opts.max_bytes_for_level_base.max(1);
        let mut downcompact = 0f64;
        let mut best: Option<(f64, usize)> = None;
        for l in 0..n - 1 {
            let score = if l == 0 {
                let mut score = st.levels[0].len() as f64 / self.opts.level0_trigger.max(1) as f64;
                if !dynamic {
                    score = score.max(sizes[0] as f64 / base_target as f64);
                } else {
                    if sizes[0] >= base_target {
                        score = score.max(1.01);
                    }
                    if sizes[0] > targets[base] {
                        score = score.max(sizes[0] as f64 / sizes[base].max(targets[base]) as f64);
                    }
                    if score > 1.0 {
                        score *= SCORE_SCALE;
                    }
                }
                downcompact += sizes[0] as f64;
                score
            } else if !dynamic || sizes[l] < targets[l] {
                sizes[l] as f64 / targets[l].max(1) as f64
            } else {
                let score = sizes[l] as f64 / (targets[l] as f64 + downcompact) * SCORE_SCALE;
                downcompact += (sizes[l] - targets[l]) as f64;
                score
            };
            if score >= 1.0 && best.is_none_or(|(b, _)| score > b) {
                best = Some((score, l));
            }
        }
        best.map(|(_, l)| l)
    }

    /// One compaction from `level` into the next: all of L0 into the base level, or the file
    /// of `level` whose overlap with the level below is smallest relative to its size
    /// (kMinOverlappingRatio) into that level.
    pub(super) async fn compact_level(&self, level: usize) -> Result<(), DbError> {
        // Inputs and the merge under the lock (CPU only; only this worker changes levels, so
        // they stay valid while the outputs are written without it).
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        let (base, _) = self.level_targets(st);
        let out_level = if level == 0 { base } else { level + 1 };
        let overlaps = |f: &Sst, lo: &[u8], hi: &[u8]| {
            !(f.largest.as_slice() < lo || f.smallest.as_slice() > hi)
        };
        let inputs: Vec<usize> = if level == 0 {
            (0..st.levels[0].len()).collect()
        } else {
            let next = &st.levels[out_level];
            let pick = (0..st.levels[level].len())
                .min_by_key(|&i| {
                    let f = &st.levels[level][i];
                    let o: u64 = next
                        .iter()
                        .filter(|g| overlaps(g, &f.smallest, &f.largest))
                        .map(|g| g.size)
                        .sum();
                    (o * 1024 / f.size.max(1), i)
                })
                .expect("a level with a score has files");
            vec![pick]
        };
        let lo = inputs
            .iter()
            .map(|&i| st.levels[level][i].smallest.clone())
            .min()
            .expect("inputs");
        let hi = inputs
            .iter()
            .map(|&i| st.levels[level][i].largest.clone())
            .max()
            .expect("inputs");
        let next_inputs: Vec<usize> = (0..st.levels[out_level].len())
            .filter(|&i| overlaps(&st.levels[out_level][i], &lo, &hi))
            .collect();
        // Trivial move (RocksDB's): one input file that overlaps nothing below changes level
        // in the MANIFEST only, without being rewritten.
        if inputs.len() == 1 && next_inputs.is_empty() {
            let f = st.levels[level].remove(inputs[0]);
            let edit = Edit {
                added: vec![(
                    level as u32 + 1,
                    f.number,
                    f.size,
                    f.smallest.clone(),
                    f.largest.clone(),
                )],
                deleted: vec![(level as u32, f.number)],
                ..Edit::default()
            };
            self.log_edit(st, &edit).await?;
            let next = &mut st.levels[out_level];
            next.push(f);
            next.sort_by(|a, b| a.smallest.cmp(&b.smallest));
            self.stats.borrow_mut().trivial_moves += 1;
            self.update_level_stats(st);
            return Ok(());
        }
        // Merge: newest version of each user key; deletions dropped when no deeper level can
        // hold an older version.
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut read = 0;
        // Raw bytes the inputs decompress to (a table loaded at open has no recorded shape:
        // its file size stands in, an underestimate by the compression ratio).
        let mut input_raw = 0;
        for (l, list) in [(level, &inputs), (out_level, &next_inputs)] {
            for &i in list.iter() {
                let f = &mut st.levels[l][i];
                read += f.size;
                input_raw += if f.shape.1 > 0 { f.shape.1 } else { f.size };
                entries.extend(f.table.entries()?);
            }
        }
        entries.sort_by(|a, b| key::compare(&a.0, &b.0));
        let deeper_overlap = |k: &[u8]| {
            st.levels[out_level + 1..]
                .iter()
                .flatten()
                .any(|f| f.smallest.as_slice() <= k && k <= f.largest.as_slice())
        };
        let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(entries.len());
        // The last user key kept or dropped (one buffer, not one allocation per entry).
        let mut last_user: Vec<u8> = Vec::new();
        let mut any = false;
        for (k, v) in entries {
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
            kept.push((k, v));
        }
        // Output files cut at the target size, with ZenFS lifetime hints by level
        // (RocksDB's CalculateSSTWriteHint: Medium up to the base level, then one step longer
        // per level below it).
        let lifetime = match out_level.saturating_sub(base) {
            0 => Lifetime::Medium,
            1 => Lifetime::Long,
            _ => Lifetime::Extreme,
        };
        let input_numbers: Vec<(u32, u64)> = inputs
            .iter()
            .map(|&i| (level as u32, st.levels[level][i].number))
            .chain(
                next_inputs
                    .iter()
                    .map(|&i| (out_level as u32, st.levels[out_level][i].number)),
            )
            .collect();
        // File numbers for the outputs, reserved now. Files are cut at the target *file* size,
        // as RocksDB cuts them: raw bytes scaled by the inputs' compression.
        let raw_target = (self.opts.target_file_size as u128 * input_raw.max(1) as u128
            / read.max(1) as u128) as u64;
        let mut cuts = Vec::new();
        let mut start = 0;
        while start < kept.len() {
            let mut end = start;
            let mut bytes = 0u64;
            while end < kept.len() && (bytes < raw_target || end == start) {
                bytes += (kept[end].0.len() + kept[end].1.len()) as u64;
                end += 1;
            }
            cuts.push((start, end, st.next_file));
            st.next_file += 1;
            start = end;
        }
        type InputFile = (u64, u64, Option<(u64, Vec<CcChunk>)>);
        let input_files: Vec<InputFile> = [(level, &inputs), (out_level, &next_inputs)]
            .into_iter()
            .flat_map(|(l, list)| list.iter().map(move |&i| (l, i)))
            .map(|(l, i)| {
                let f = &st.levels[l][i];
                let cc = f
                    .table
                    .cc_region()
                    .map(|r| (r, f.table.cc_chunks().to_vec()));
                (f.number, f.size, cc)
            })
            .collect();
        drop(guard);
        // The inputs come from the device, each read front to back in readahead-sized reads
        // (a CCZNS table's data region by decompressed reads, then its plain tail).
        let chunk = self.opts.compaction_readahead_size.max(4096);
        let mut buf = vec![0u8; chunk as usize];
        for (number, size, cc) in input_files {
            let name = sst_name(number);
            let mut off = 0;
            if let Some((region, chunks)) = cc {
                // As compaction reads: multi-chunk DRs up to its readahead.
                let multi = self.opts.compression.cc().is_none_or(|c| c.multi_chunk_dr);
                let max = self.opts.compaction_readahead_size;
                let mut buf = Vec::new();
                dr_region(&self.fs, &name, &chunks, max, multi, false, &mut buf).await?;
                off = region;
            }
            while off < size {
                let n = (size - off).min(chunk) as usize;
                self.fs.read(&name, off, &mut buf[..n]).await?;
                off += n as u64;
            }
        }
        let mut outputs = Vec::new();
        for (start, end, number) in cuts {
            let sst = Self::write_table(
                &self.fs,
                &self.opts,
                &self.decoded,
                kept[start..end]
                    .iter()
                    .map(|(k, v)| (k.as_slice(), v.as_slice())),
                number,
                lifetime,
            )
            .await?;
            outputs.push(sst);
        }
        let written: u64 = outputs.iter().map(|f| f.size).sum();
        // CPU: decompress the inputs' blocks, merge, compress the outputs' blocks.
        let decomp = self.opts.compression.profile().map_or(0, |p| {
            input_raw.div_ceil(4096) * p.decompress.latency_ns(4096)
        });
        let shapes: Vec<_> = outputs.iter().map(|f| f.shape).collect();
        self.build_cpu(decomp, &shapes).await;
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        // Log the edit, then install it and delete the inputs.
        let edit = Edit {
            next_file: Some(st.next_file),
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
        // Remove the inputs by number: the flusher may have added L0 files meanwhile.
        let dead: Vec<u64> = input_numbers.iter().map(|&(_, n)| n).collect();
        for l in [level, out_level] {
            st.levels[l].retain(|f| !dead.contains(&f.number));
        }
        st.levels[out_level].extend(outputs);
        st.levels[out_level].sort_by(|a, b| a.smallest.cmp(&b.smallest));
        for n in dead {
            self.cache.borrow_mut().forget_file(n);
            self.doomed.borrow_mut().insert(n);
        }
        self.delete_retired_tables().await?;
        let mut s = self.stats.borrow_mut();
        s.compactions += 1;
        s.compaction_read_bytes += read;
        s.compaction_written_bytes += written;
        drop(s);
        self.update_level_stats(st);
        Ok(())
    }
}
