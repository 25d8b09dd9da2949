//! The background workers (RocksDB's max_background_jobs = 2: one flush thread, one
//! compaction thread), waiting for them, and the flush of an immutable memtable to an L0
//! table.

use std::rc::Rc;

use super::super::memtable::MemTable;
use super::version::Edit;
use super::{wal_name, DbError, Inner};

impl Inner {
    pub(super) fn bg_running(&self) -> bool {
        self.flush_running.get() || self.compact_running.get()
    }

    /// Start the flush worker and the compaction worker unless they run.
    pub(super) fn schedule(self: &Rc<Self>) {
        if !self.flush_running.get() {
            self.flush_running.set(true);
            let me = self.clone();
            self.fs.io().sim().spawn(async move { me.flusher().await });
        }
        self.schedule_compaction();
    }

    fn schedule_compaction(self: &Rc<Self>) {
        if !self.compact_running.get() {
            self.compact_running.set(true);
            let me = self.clone();
            self.fs
                .io()
                .sim()
                .spawn(async move { me.compactor().await });
        }
    }

    /// Flush immutable memtables as they come; each new L0 file may call for compaction.
    async fn flusher(self: Rc<Self>) {
        loop {
            let imm = self.st.lock().await.imm.clone();
            let Some(imm) = imm else { break };
            if let Err(e) = self.flush_imm(imm).await {
                self.failed(e);
                break;
            }
            self.progress.notify_waiters();
            self.schedule_compaction();
        }
        self.flush_running.set(false);
        self.progress.notify_waiters();
    }

    /// Compact while some level's score is ≥ 1, running beside the flusher.
    async fn compactor(self: Rc<Self>) {
        while let Some(level) = self.pick_compaction().await {
            if let Err(e) = self.compact_level(level).await {
                self.failed(e);
                break;
            }
            self.progress.notify_waiters();
        }
        self.compact_running.set(false);
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
            if st.imm.is_none() {
                self.switch_memtable(&mut st).await?;
                drop(st);
                self.schedule();
            }
        }
    }

    /// Write the immutable memtable as an L0 SST and make it part of the version.
    async fn flush_imm(&self, imm: Rc<MemTable>) -> Result<(), DbError> {
        let number = {
            let mut st = self.st.lock().await;
            st.next_file += 1;
            st.next_file - 1
        };
        let sst = Self::write_sst(&self.fs, &self.opts, &self.decoded, &imm, number).await?;
        let (e, raw, blocks) = sst.shape;
        self.build_cpu(0, &[(e, raw, blocks)]).await;
        let mut st = self.st.lock().await;
        // The edit makes the immutable memtable's WAL obsolete: the live WAL is the oldest
        // one recovery needs now.
        let edit = Edit {
            log_number: Some(st.wal_number),
            next_file: Some(st.next_file),
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
        }
        st.levels[0].insert(0, sst);
        st.imm = None;
        if let Some(old) = st.imm_wal.take() {
            self.fs.delete(&wal_name(old)).await?;
        }
        self.update_level_stats(&st);
        Ok(())
    }
}
