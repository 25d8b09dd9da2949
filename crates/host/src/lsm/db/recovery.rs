//! Open: the newest MANIFEST that decodes gives the version, the WALs it still needs are
//! replayed into a memtable and flushed to L0, tables no version names are deleted, and a new
//! WAL and MANIFEST (starting with a snapshot of the version) take over.

use std::rc::Rc;

use sim::sync::{Mutex, Notify};

use super::super::log::{read_log, LogWriter};
use super::super::memtable::{MemTable, WriteBatch};
use super::super::sst::{self, Table};
use super::options::DbOptions;
use super::version::{Edit, NewFile};
use super::{
    manifest_name, number_of, sst_name, wal_name, Corruption, DbError, DbStats, Inner, Sst, State,
};
use crate::zonefs::{FsError, Lifetime, ZoneFs};

async fn read_file(fs: &ZoneFs, name: &str) -> Result<Vec<u8>, FsError> {
    let mut buf = vec![0u8; fs.size(name)? as usize];
    let n = fs.read(name, 0, &mut buf).await?;
    buf.truncate(n);
    Ok(buf)
}

/// Bytes `[from, to)` of a file, by plain reads.
async fn read_range(fs: &ZoneFs, name: &str, from: u64, to: u64) -> Result<Vec<u8>, DbError> {
    let mut buf = vec![0u8; to.saturating_sub(from) as usize];
    let n = fs.read(name, from, &mut buf).await?;
    if n != buf.len() {
        return Err(Corruption::ShortFile {
            file: name.to_string(),
        }
        .into());
    }
    Ok(buf)
}

/// Open a table from the device: its tail only (RocksDB's open reads the footer, metaindex,
/// properties, index and filter; the data blocks stay on the device). Each read extends the
/// tail downwards: the footer, the metaindex to the end, the properties, then the filter and
/// index (for a CCZNS table everything after its data region).
async fn read_table(fs: &ZoneFs, name: &str) -> Result<Table, DbError> {
    let size = fs.size(name)?;
    let end = read_range(fs, name, size.saturating_sub(sst::FOOTER_BYTES), size).await?;
    let (meta_h, _) = sst::footer_handles(&end)?;
    let meta_at = meta_h.offset.min(size);
    let mut tail = read_range(fs, name, meta_at, size).await?;
    let from = sst::properties_handle(&tail, meta_at)?.map_or(meta_at, |h| h.offset.min(meta_at));
    prepend(&mut tail, read_range(fs, name, from, meta_at).await?);
    let start = match sst::cc_region(&tail, from)? {
        Some(region) => region,
        None => sst::tail_start(&tail, from)?,
    }
    .min(from);
    prepend(&mut tail, read_range(fs, name, start, from).await?);
    Ok(Table::open(&tail, start)?)
}

fn prepend(tail: &mut Vec<u8>, mut head: Vec<u8>) {
    head.extend_from_slice(tail);
    *tail = head;
}

impl Inner {
    pub(super) async fn open(fs: Rc<ZoneFs>, opts: DbOptions) -> Result<Inner, DbError> {
        let names = fs.list();
        // The newest MANIFEST whose edits decode (an older one may survive a crash that
        // happened while its successor was being written; the successor then lacks nothing
        // the older one had, or it would not have been synced).
        let mut manifests: Vec<u64> = names
            .iter()
            .filter_map(|n| number_of(n, "MANIFEST-", ""))
            .collect();
        manifests.sort_unstable_by(|a, b| b.cmp(a));
        let mut edits = None;
        for m in &manifests {
            let bytes = read_file(&fs, &manifest_name(*m)).await?;
            let Ok(log) = read_log(&bytes) else { continue };
            let decoded: Option<Vec<Edit>> = log.records.iter().map(|r| Edit::decode(r)).collect();
            if let Some(list) = decoded.filter(|l| !l.is_empty()) {
                edits = Some(list);
                break;
            }
        }
        let (mut log_number, mut next_file, mut last_seq) = (0u64, 2u64, 0u64);
        let mut files: Vec<NewFile> = Vec::new();
        for e in edits.iter().flatten() {
            log_number = e.log_number.unwrap_or(log_number);
            next_file = e.next_file.unwrap_or(next_file);
            last_seq = e.last_seq.unwrap_or(last_seq);
            files.retain(|f| !e.deleted.iter().any(|d| d.1 == f.1));
            files.extend(e.added.iter().cloned());
        }
        let mut levels: Vec<Vec<Rc<Sst>>> =
            (0..opts.num_levels.max(2)).map(|_| Vec::new()).collect();
        let live: Vec<u64> = files.iter().map(|f| f.1).collect();
        for (level, number, size, smallest, largest) in files {
            let table = read_table(&fs, &sst_name(number)).await?;
            let l = levels
                .get_mut(level as usize)
                .ok_or_else(|| DbError::from(Corruption::ManifestLevel { level }))?;
            l.push(Rc::new(Sst {
                number,
                size,
                shape: (0, 0, 0),
                smallest,
                largest,
                table,
            }));
        }
        // Tables no version names: a flush or compaction cut short by a crash (RocksDB
        // deletes such obsolete files at open).
        for n in names.iter().filter_map(|n| number_of(n, "", ".sst")) {
            if !live.contains(&n) {
                fs.delete(&sst_name(n)).await?;
            }
        }
        levels[0].sort_by_key(|f| std::cmp::Reverse(f.number));
        for l in &mut levels[1..] {
            l.sort_by(|a, b| a.smallest.cmp(&b.smallest));
        }
        // WALs still needed: replay into a memtable.
        let mut wals: Vec<u64> = names
            .iter()
            .filter_map(|n| number_of(n, "", ".log"))
            .filter(|&n| n >= log_number)
            .collect();
        wals.sort_unstable();
        let mut mem = MemTable::default();
        for w in &wals {
            let log = read_log(&read_file(&fs, &wal_name(*w)).await?)?;
            for rec in &log.records {
                let (seq, batch) = WriteBatch::decode(rec)
                    .ok_or_else(|| DbError::from(Corruption::WriteBatch { wal: wal_name(*w) }))?;
                for (i, (t, k, v)) in batch.ops.iter().enumerate() {
                    mem.insert(k, seq + i as u64, *t, v);
                }
                last_seq = last_seq.max(seq + batch.ops.len() as u64 - 1);
            }
            next_file = next_file.max(w + 1);
        }
        next_file = next_file.max(manifests.first().map_or(0, |m| m + 1));
        let mut edit = Edit::default();
        // What the WALs held goes to L0 now (RocksDB flushes during recovery by default).
        if !mem.is_empty() {
            let number = next_file;
            next_file += 1;
            let sst = Self::write_sst(&fs, &opts, &mem, number).await?;
            edit.added.push((
                0,
                sst.number,
                sst.size,
                sst.smallest.clone(),
                sst.largest.clone(),
            ));
            levels[0].insert(0, Rc::new(sst));
        }
        let wal_number = next_file;
        let manifest_number = next_file + 1;
        next_file += 2;
        let wal = fs.writer(&wal_name(wal_number), Lifetime::Short).await?;
        let mut manifest = fs
            .writer(&manifest_name(manifest_number), Lifetime::NotSet)
            .await?;
        // The new MANIFEST starts with a snapshot of the whole version.
        let snapshot = Edit {
            log_number: Some(wal_number),
            next_file: Some(next_file),
            last_seq: Some(last_seq),
            added: levels
                .iter()
                .enumerate()
                .flat_map(|(l, files)| {
                    files.iter().map(move |s| {
                        (
                            l as u32,
                            s.number,
                            s.size,
                            s.smallest.clone(),
                            s.largest.clone(),
                        )
                    })
                })
                .collect(),
            deleted: Vec::new(),
        };
        let mut manifest_log = LogWriter::default();
        let mut buf = Vec::new();
        manifest_log.add(&snapshot.encode(), &mut buf);
        manifest.append(&buf).await?;
        manifest.sync().await?;
        // Only now is the old state obsolete.
        for m in manifests {
            fs.delete(&manifest_name(m)).await?;
        }
        for w in wals {
            fs.delete(&wal_name(w)).await?;
        }
        let stats = DbStats {
            last_sequence: last_seq,
            series: super::JobSeries::new(fs.io().sim().now().as_ns()),
            ..DbStats::default()
        };
        let db = Inner {
            fs,
            cache: std::cell::RefCell::new(super::super::cache::BlockCache::new(
                opts.block_cache_bytes,
            )),
            coder: Default::default(),
            next_file: std::cell::Cell::new(next_file),
            opts,
            flush_running: std::cell::Cell::new(0),
            compact_running: std::cell::Cell::new(0),
            unclaimed: std::cell::Cell::new(0),
            speedup: std::cell::Cell::new(false),
            progress: Notify::new(),
            bg_error: std::cell::RefCell::new(None),
            doomed: Default::default(),
            st: Mutex::new(State {
                mem: MemTable::default(),
                imms: Default::default(),
                running: Vec::new(),
                next_compaction: 0,
                levels,
                last_seq,
                wal_number,
                wal,
                wal_log: LogWriter::default(),
                manifest,
                manifest_log,
            }),
            stats: std::cell::RefCell::new(stats),
        };
        db.update_level_stats(&*db.st.lock().await);
        Ok(db)
    }
}
