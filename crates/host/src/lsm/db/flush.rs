//! The background workers (RocksDB's `MaybeScheduleFlushOrCompaction` under its job limits:
//! up to `max_background_flushes` flush workers and `max_background_compactions` compaction
//! workers; the default max_background_jobs = 2 gives one of each), waiting for them, and the
//! flush of an immutable memtable to an L0 table. Flushes take the oldest memtable no worker
//! has taken; several may run at once, and each installs only after every older one has (so
//! L0's order and the WALs the MANIFEST still names stay those of the memtables).

use std::rc::Rc;

use super::super::memtable::MemTable;
use super::version::{bottommost_bytes, compaction_needed_bytes, Edit};
use super::{wal_name, DbError, Inner, State};

impl Inner {
    pub(super) fn bg_running(&self) -> bool {
        self.flush_running.get() > 0 || self.compact_running.get() > 0
    }

    /// Start flush workers (one if none runs, and one per memtable no worker has taken, up
    /// to the limit) and compaction workers.
    pub(super) fn schedule(self: &Rc<Self>) {
        let limit = self.opts.max_background_flushes.max(1);
        let running = self.flush_running.get();
        let unclaimed = self.unclaimed.get();
        let start = if running == 0 {
            unclaimed.min(limit).max(1)
        } else {
            unclaimed.min(limit.saturating_sub(running))
        };
        for _ in 0..start {
            self.flush_running.set(self.flush_running.get() + 1);
            let me = self.clone();
            self.fs.io().sim().spawn(async move { me.flusher().await });
        }
        self.schedule_compaction();
    }

    /// Compactions that may run now: one, or `max_background_compactions` under compaction
    /// pressure (RocksDB's `GetBGJobLimits` with `parallelize_compactions`).
    fn compaction_limit(&self) -> usize {
        if self.speedup.get() {
            self.opts.max_background_compactions.max(1)
        } else {
            1
        }
    }

    /// Recompute RocksDB's compaction pressure from L0 (files not being compacted at the
    /// speedup count, or at the slowdown or stop trigger) and the memtables (writes slowed or
    /// stopped by them).
    pub(super) fn update_speedup(&self, st: &State) {
        let busy_l0 = st
            .running
            .iter()
            .filter(|r| r.level == 0)
            .map(|r| {
                st.levels[0]
                    .iter()
                    .filter(|f| r.files.contains(&f.number))
                    .count()
            })
            .sum::<usize>();
        let l0 = st.levels[0].len();
        let full = st.mem.bytes() >= self.opts.write_buffer_size
            && st.imms.len() + 1 >= self.opts.max_write_buffer_number;
        let pressure = l0 - busy_l0.min(l0) >= self.opts.l0_speedup_files()
            || l0 >= self.opts.level0_slowdown
            || l0 >= self.opts.level0_stop
            || full
            || self.memtables_delay(st);
        // The compaction debt counts only where compactions may run side by side.
        let debt = || {
            let soft = self.opts.soft_pending_compaction_bytes_limit;
            let slowdown = soft / 4;
            let bottom = bottommost_bytes(st);
            let threshold = if bottom == 0 {
                slowdown
            } else {
                (bottom / 8)
                    .max(2 * self.opts.max_bytes_for_level_base)
                    .min(slowdown)
            };
            soft == 0 || compaction_needed_bytes(&self.opts, st) >= threshold
        };
        self.speedup
            .set(pressure || (self.opts.max_background_compactions > 1 && debt()));
    }

    fn schedule_compaction(self: &Rc<Self>) {
        let limit = self.compaction_limit();
        while self.compact_running.get() < limit {
            self.compact_running.set(self.compact_running.get() + 1);
            let me = self.clone();
            self.fs
                .io()
                .sim()
                .spawn(async move { me.compactor().await });
        }
    }

    /// Flush immutable memtables as they come, oldest first; each new L0 file may call for
    /// compaction.
    async fn flusher(self: Rc<Self>) {
        let several = self.opts.max_background_flushes > 1;
        loop {
            let claimed = {
                let mut st = self.st.lock().await;
                let st = &mut *st;
                match st.imms.iter_mut().find(|m| !m.claimed) {
                    Some(m) => {
                        m.claimed = true;
                        self.unclaimed.set(self.unclaimed.get().saturating_sub(1));
                        let (mem, wal) = (m.mem.clone(), m.wal);
                        // With several workers the table's number is taken with the memtable,
                        // so L0's numbers follow the memtables' age (open orders L0 by them).
                        let number = several.then(|| self.new_file_number());
                        Some((mem, wal, number))
                    }
                    None => None,
                }
            };
            let Some((imm, wal, number)) = claimed else {
                break;
            };
            if let Err(e) = self.flush_imm(imm, wal, number).await {
                self.failed(e);
                break;
            }
            self.progress.notify_waiters();
            self.schedule_compaction();
        }
        self.flush_running.set(self.flush_running.get() - 1);
        self.progress.notify_waiters();
    }

    /// Compact while some level's score is ≥ 1 and a compaction can be picked beside the
    /// running ones, running beside the flushers.
    async fn compactor(self: Rc<Self>) {
        // Past the limit (the pressure went), a worker stops after its compaction.
        while self.compact_running.get() <= self.compaction_limit() {
            let Some(picked) = self.pick_compaction().await else {
                break;
            };
            // A failed compaction stays marked: the store takes no more writes, and no
            // compaction installs after it (its edit would not be logged).
            if let Err(e) = self.compact(picked).await {
                self.failed(e);
                break;
            }
            self.progress.notify_waiters();
            self.schedule_compaction();
        }
        self.compact_running.set(self.compact_running.get() - 1);
        self.progress.notify_waiters();
    }

    pub(super) async fn wait_idle(&self) -> Result<(), DbError> {
        while self.bg_running() {
            self.progress.notified().await;
        }
        self.check_bg()
    }

    pub(super) async fn flush(self: &Rc<Self>) -> Result<(), DbError> {
        loop {
            self.wait_idle().await?;
            let mut st = self.st.lock().await;
            if st.mem.is_empty() {
                return Ok(());
            }
            if st.imms.is_empty() {
                self.switch_memtable(&mut st).await?;
                drop(st);
                self.schedule();
            }
        }
    }

    /// Write an immutable memtable (whose writes WAL `wal` holds) as an L0 SST (`number`, or
    /// one taken now) and make it part of the version once every older memtable is.
    async fn flush_imm(
        &self,
        imm: Rc<MemTable>,
        wal: u64,
        number: Option<u64>,
    ) -> Result<(), DbError> {
        let number = number.unwrap_or_else(|| self.new_file_number());
        let began = self.fs.io().sim().now().as_ns();
        let sst = Self::write_sst(&self.fs, &self.opts, &imm, number).await?;
        self.count_compressed(&sst);
        let (e, raw, blocks) = sst.shape;
        self.build_cpu(0, &[(e, raw, blocks)]).await;
        let mut st = self.st.lock().await;
        // Flushes install in the memtables' order (RocksDB's memtable list commits them so).
        while st.imms.front().map(|m| m.wal) != Some(wal) {
            drop(st);
            self.progress.notified().await;
            self.check_bg()?;
            st = self.st.lock().await;
        }
        // The edit makes the memtable's WAL obsolete: the oldest one recovery needs now is the
        // next memtable's, or the live one.
        let edit = Edit {
            log_number: Some(st.imms.get(1).map_or(st.wal_number, |m| m.wal)),
            next_file: Some(self.next_file.get()),
            last_seq: Some(st.last_seq),
            added: vec![(
                0,
                sst.number,
                sst.size,
                sst.smallest.clone(),
                sst.largest.clone(),
            )],
            deleted: Vec::new(),
        };
        self.log_edit(&mut st, &edit).await?;
        {
            let mut s = self.stats.borrow_mut();
            s.flushes += 1;
            s.flushed_bytes += sst.size;
            let now = self.fs.io().sim().now().as_ns();
            s.series.flush(began, now, sst.size);
        }
        st.levels[0].insert(0, Rc::new(sst));
        st.imms.pop_front();
        self.stats.borrow_mut().immutable_memtables = st.imms.len();
        self.fs.delete(&wal_name(wal)).await?;
        self.update_level_stats(&st);
        Ok(())
    }
}
