//! The write path: a batch goes to the WAL and the memtable, behind RocksDB's write stalls
//! (a full memtable while the previous one flushes, L0 at its stop trigger) and slowdown; a
//! full memtable is switched for a new one and a new WAL.

use std::rc::Rc;

use sim::SimDuration;

use super::super::log::LogWriter;
use super::super::memtable::WriteBatch;
use super::{wal_name, DbError, Imm, Inner, State, Stopper};
use crate::zonefs::Lifetime;

impl Inner {
    pub(super) async fn write(
        self: &Rc<Self>,
        batch: &WriteBatch,
        sync: bool,
    ) -> Result<Option<u64>, DbError> {
        if batch.ops.is_empty() {
            return Ok(None);
        }
        self.cpu(self.opts.cpu.write_ns * batch.ops.len() as u64)
            .await;
        // Stalls: a full memtable while the previous one is still flushing, or L0 at its stop
        // trigger, hold the writer until background work makes room (RocksDB's write stalls).
        let mut st = loop {
            let mut st = self.st.lock().await;
            // Checked holding the lock: a writer queued behind one whose WAL write failed must
            // not append after it (the log writer's framing has moved past the lost record).
            self.check_bg()?;
            let t0 = self.fs.io().sim().now();
            if st.mem.bytes() >= self.opts.write_buffer_size {
                // RocksDB stops writes once max_write_buffer_number memtables are full: this
                // one and the immutable ones waiting for a flush.
                if st.imms.len() + 1 >= self.opts.max_write_buffer_number {
                    drop(st);
                    self.progress.notified().await;
                    let waited = self.fs.io().sim().now().since(t0).as_ns();
                    self.stats.borrow_mut().stall_memtable_ns += waited;
                    continue;
                }
                if let Err(e) = self.switch_memtable(&mut st).await {
                    return Err(self.failed_write(Stopper::StartingWal, e));
                }
                self.schedule();
            }
            if st.levels[0].len() >= self.opts.level0_stop && self.bg_running() {
                drop(st);
                self.progress.notified().await;
                let waited = self.fs.io().sim().now().since(t0).as_ns();
                self.stats.borrow_mut().stall_l0_ns += waited;
                continue;
            }
            break st;
        };
        let seq = st.last_seq + 1;
        let mut rec = Vec::new();
        let encoded = batch.encode(seq);
        if !self.opts.disable_wal {
            st.wal_log.add(&encoded, &mut rec);
            // The log writer has framed the record into its block: a record the WAL did not
            // take would leave the framing of every later one wrong (RocksDB stops writes too).
            if let Err(e) = st.wal.append(&rec).await {
                return Err(self.failed_write(Stopper::WalWrite, e.into()));
            }
        }
        if sync && !self.opts.disable_wal {
            if let Err(e) = st.wal.sync().await {
                return Err(self.failed_write(Stopper::WalSync, e.into()));
            }
        }
        for (i, (t, k, v)) in batch.ops.iter().enumerate() {
            st.mem.insert(k, seq + i as u64, *t, v);
        }
        st.last_seq = seq + batch.ops.len() as u64 - 1;
        let slowed = st.levels[0].len() >= self.opts.level0_slowdown || self.memtables_delay(&st);
        {
            let mut s = self.stats.borrow_mut();
            s.writes += 1;
            s.wal_bytes += rec.len() as u64;
            s.last_sequence = st.last_seq;
            s.memtable_bytes = st.mem.bytes() + st.imm_bytes();
        }
        drop(st);
        if slowed {
            // Held to delayed_write_rate while L0 is past the slowdown trigger.
            let ns = encoded.len() as u64 * 1_000_000_000 / self.opts.delayed_write_rate.max(1);
            self.stats.borrow_mut().slowdown_ns += ns;
            let sim = self.fs.io().sim().clone();
            sim.sleep(SimDuration::from_ns(ns)).await;
        }
        Ok(Some(seq))
    }

    /// The memtable becomes immutable (to be flushed) and writes go to a new one and a new WAL.
    pub(super) async fn switch_memtable(&self, st: &mut State) -> Result<(), DbError> {
        let wal_number = self.new_file_number();
        let new_wal = self
            .fs
            .writer(&wal_name(wal_number), Lifetime::Short)
            .await?;
        let old_wal = std::mem::replace(&mut st.wal, new_wal);
        old_wal.close().await?;
        st.imms.push_back(Imm {
            mem: Rc::new(std::mem::take(&mut st.mem)),
            wal: st.wal_number,
            claimed: false,
        });
        self.unclaimed.set(self.unclaimed.get() + 1);
        {
            let mut s = self.stats.borrow_mut();
            s.immutable_memtables = st.imms.len();
            s.max_immutable_memtables = s.max_immutable_memtables.max(st.imms.len());
        }
        st.wal_number = wal_number;
        st.wal_log = LogWriter::default();
        self.stats.borrow_mut().memtable_bytes = st.imm_bytes();
        self.update_speedup(st);
        Ok(())
    }

    /// RocksDB's delayed-write condition for memtables: with more than 3 write buffers, writes
    /// slow down while `max_write_buffer_number - 1` immutable memtables wait for a flush.
    pub(super) fn memtables_delay(&self, st: &State) -> bool {
        let n = self.opts.max_write_buffer_number;
        n > 3 && st.imms.len() + 1 >= n
    }
}
