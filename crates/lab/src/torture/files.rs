//! The file workload of `znslab torture` and its oracle, on any [`FileSystem`]: writers, each
//! in its own directory, create files, overwrite and append blocks, fsync, unlink and sync; a
//! log keeps what each acknowledgement made durable. After a power cut and a mount, the
//! oracle checks what a POSIX file system owes (F2FS: fsync with roll-forward recovery,
//! checkpoints at sync): every file fsynced or synced is there, with every block at the version
//! it had then or one written later, its size between the one made durable and the largest
//! written; a file whose unlink a sync followed is gone; nothing is there that was never
//! created; no block holds bytes that were never written to it.
//!
//! Blocks describe themselves (file, block, version in a header, the rest derived from them),
//! so the oracle needs no copy of the data.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use host::fs::{FileSystem, FsError, Ino};
use sim::{Rng, SimDuration};

use super::files_log::{Event, Log, SharedLog};

/// Block size the workload writes in (F2FS's).
pub(crate) const BLOCK: usize = 4096;
const MAGIC: u64 = 0x7a6e_736c_6162_6631; // "znslabf1"

/// Fill `buf` with block `block` of file `file` at `version`.
pub(crate) fn block_image(file: u64, block: u64, version: u64, buf: &mut [u8]) {
    buf[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    buf[8..16].copy_from_slice(&file.to_le_bytes());
    buf[16..24].copy_from_slice(&block.to_le_bytes());
    buf[24..32].copy_from_slice(&version.to_le_bytes());
    let mut x = file ^ block.rotate_left(21) ^ version.rotate_left(42) | 1;
    for w in buf[32..].chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w.copy_from_slice(&x.to_le_bytes()[..w.len()]);
    }
}

/// The version a block read back holds: 0 for zeros, None for bytes never written.
fn version_of(file: u64, block: u64, buf: &[u8]) -> Option<u64> {
    if buf.iter().all(|&b| b == 0) {
        return Some(0);
    }
    let v = u64::from_le_bytes(buf[24..32].try_into().ok()?);
    let mut want = vec![0u8; buf.len()];
    block_image(file, block, v, &mut want);
    (want == buf).then_some(v)
}

/// Run `writers` writer tasks on `fs` until the simulation stops them (the power cut), each
/// in directory `/w{i}`, logging into `log`. A failed call stops its writer and is kept in
/// `failed` (a fault may cause it; anything else is a failure the caller reports).
/// Each writer first writes a file of `ballast` blocks and fsyncs it (filling the file system,
/// so that its space is reclaimed while the writers run).
pub(crate) fn start<F: FileSystem>(
    fs: Rc<F>,
    rng: &Rng,
    writers: u32,
    ballast: u64,
    log: SharedLog,
    failed: Rc<RefCell<Option<String>>>,
) {
    let sim = fs.sim().clone();
    for w in 0..writers {
        let (fs, log, failed) = (fs.clone(), log.clone(), failed.clone());
        let mut rng = rng.stream(&format!("files-writer-{w}"));
        let sim2 = sim.clone();
        sim.spawn(async move {
            if let Err(e) = writer(&*fs, w, ballast, &mut rng, &log, &sim2).await {
                failed
                    .borrow_mut()
                    .get_or_insert(format!("writer {w}: {e}"));
            }
        });
    }
}

async fn writer<F: FileSystem>(
    fs: &F,
    w: u32,
    ballast: u64,
    rng: &mut Rng,
    log: &SharedLog,
    sim: &sim::Sim,
) -> Result<(), FsError> {
    let dir = format!("/w{w}");
    fs.mkdir(&dir).await?;
    fs.sync().await?;
    let mut next = 0u64;
    let mut open: Vec<(String, Ino)> = Vec::new();
    let mut buf = vec![0u8; 16 * BLOCK];
    let mut full = false;
    if ballast > 0 {
        let path = format!("{dir}/ballast");
        let ino = create_logged(fs, log, &path, (w as u64) << 32 | u32::MAX as u64).await?;
        let mut at = 0;
        while at < ballast {
            let n = 16.min(ballast - at);
            match write_blocks(fs, log, &path, ino, at, n, &mut buf).await {
                Err(FsError::NoSpace) => break, // the others filled the rest
                r => r?,
            }
            at += n;
        }
        match fsync_logged(fs, log, &path, ino).await {
            Err(FsError::NoSpace) => full = true,
            r => r?,
        }
        open.push((path, ino));
    }
    loop {
        let op = if full && !open.is_empty() {
            // The file system is full: unlink a file, then sync (F2FS frees its space at the
            // next checkpoint).
            full = false;
            88
        } else {
            rng.below(100)
        };
        // "No space left" stops no writer: it unlinks a file and syncs next (whatever a
        // partly applied call left, the log allows).
        let r = async {
            if open.is_empty() || op < 20 {
                // Create a file and write its first blocks.
                let path = format!("{dir}/f{next}");
                let id = (w as u64) << 32 | next;
                next += 1;
                let ino = create_logged(fs, log, &path, id).await?;
                open.push((path.clone(), ino));
                let n = 1 + rng.below(8);
                write_blocks(fs, log, &path, ino, 0, n, &mut buf).await?;
            } else if op < 60 {
                // Overwrite or append a run of blocks.
                let (path, ino) = open[rng.below(open.len() as u64) as usize].clone();
                let size = log.get().files[&path].acked_size / BLOCK as u64;
                let first = if rng.below(3) == 0 {
                    size
                } else {
                    rng.below(size.max(1))
                };
                let n = 1 + rng.below(16);
                write_blocks(fs, log, &path, ino, first, n, &mut buf).await?;
            } else if op < 78 {
                // fsync: issued now, what was acknowledged before it becomes durable.
                let (path, ino) = open[rng.below(open.len() as u64) as usize].clone();
                fsync_logged(fs, log, &path, ino).await?;
            } else if op < 88 {
                // Read a file back: what was acknowledged (or a later version a call that
                // failed, out of space, may have left).
                let (path, ino) = open[rng.below(open.len() as u64) as usize].clone();
                let f = log.get().files[&path].clone();
                let size = fs.size(ino)?;
                for (i, b) in f.blocks.iter().enumerate() {
                    let at = i as u64 * BLOCK as u64;
                    let v = if at >= size {
                        Some(0)
                    } else {
                        buf[..BLOCK].fill(0);
                        fs.read(ino, at, &mut buf[..BLOCK]).await?;
                        version_of(f.id, i as u64, &buf[..BLOCK])
                    };
                    let ok = v.is_some_and(|v| {
                        (v == b.acked || (v > b.acked && v <= b.issued)) && (v > 0 || b.acked == 0)
                    });
                    if !ok {
                        return Err(FsError::Io(format!(
                            "{path} block {i}: read back {v:?}, acknowledged version {} \
                             (before the cut)",
                            b.acked
                        )));
                    }
                }
            } else if op < 95 {
                let i = rng.below(open.len() as u64) as usize;
                let (path, _) = open.swap_remove(i);
                log.record(Event::Unlink { path: path.clone() })?;
                fs.unlink(&path).await?;
                log.record(Event::Unlinked { path })?;
                if op == 88 {
                    sync_all(fs, log, w).await?;
                }
            } else {
                sync_all(fs, log, w).await?;
            }
            Ok::<(), FsError>(())
        }
        .await;
        match r {
            Err(FsError::NoSpace) => full = true,
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        sim.sleep(SimDuration::from_us(rng.below(50))).await;
    }
}

/// Create file `path` with log id `id`, logged before the call (a cut during it may leave
/// the file or not) and marked created after it.
async fn create_logged<F: FileSystem>(
    fs: &F,
    log: &SharedLog,
    path: &str,
    id: u64,
) -> Result<host::fs::Ino, FsError> {
    let path = path.to_string();
    log.record(Event::Create {
        path: path.clone(),
        id,
    })?;
    let ino = fs.create(&path).await?;
    log.record(Event::Created { path })?;
    Ok(ino)
}

/// `fsync`: issued now, what was acknowledged before it becomes durable.
async fn fsync_logged<F: FileSystem>(
    fs: &F,
    log: &SharedLog,
    path: &str,
    ino: Ino,
) -> Result<(), FsError> {
    let path = path.to_string();
    log.record(Event::Fsync { path: path.clone() })?;
    fs.fsync(ino).await?;
    log.record(Event::Fsynced { path })
}

/// `sync` by writer `w`: what every writer had acknowledged when it was issued becomes
/// durable.
async fn sync_all<F: FileSystem>(fs: &F, log: &SharedLog, w: u32) -> Result<(), FsError> {
    log.record(Event::Sync { writer: w })?;
    fs.sync().await?;
    log.record(Event::Synced { writer: w })
}

/// Write blocks `first..first + n` of file `path`, logging issued and acknowledged versions.
async fn write_blocks<F: FileSystem>(
    fs: &F,
    log: &SharedLog,
    path: &str,
    ino: Ino,
    first: u64,
    n: u64,
    buf: &mut [u8],
) -> Result<(), FsError> {
    let path = path.to_string();
    log.record(Event::Write {
        path: path.clone(),
        first,
        n,
    })?;
    let (id, versions): (u64, Vec<u64>) = {
        let l = log.get();
        let f = &l.files[&path];
        let blocks = &f.blocks[first as usize..(first + n) as usize];
        (f.id, blocks.iter().map(|b| b.issued).collect())
    };
    for (k, &v) in versions.iter().enumerate() {
        block_image(
            id,
            first + k as u64,
            v,
            &mut buf[k * BLOCK..(k + 1) * BLOCK],
        );
    }
    fs.write(ino, first * BLOCK as u64, &buf[..n as usize * BLOCK])
        .await?;
    log.record(Event::Wrote { path })
}

/// After power-on and a mount: check `fs` against the log. Returns the blocks checked.
pub(crate) async fn check<F: FileSystem>(fs: &F, log: &Log) -> Result<u64, String> {
    let log = &log.files;
    let mut checked = 0;
    // Nothing that was never created.
    let mut dirs: BTreeMap<String, ()> = BTreeMap::new();
    for path in log.keys() {
        if let Some((d, _)) = host::fs::split_path(path) {
            dirs.insert(d.to_string(), ());
        }
    }
    for d in dirs.keys() {
        let names = match fs.readdir(d).await {
            Ok(n) => n,
            Err(FsError::NotFound(_)) => continue, // made durable by nothing yet
            Err(e) => return Err(format!("readdir {d}: {e}")),
        };
        for n in names {
            let p = format!("{d}/{n}");
            if !log.contains_key(&p) {
                return Err(format!("{p} is there but was never created"));
            }
        }
    }
    let mut buf = vec![0u8; BLOCK];
    for (path, f) in log {
        let st = match fs.stat(path).await {
            Ok(st) => st,
            Err(FsError::NotFound(_)) => {
                if f.durable && !f.unlink_issued {
                    return Err(format!("{path}: fsynced or synced, and gone"));
                }
                continue;
            }
            Err(e) => return Err(format!("stat {path}: {e}")),
        };
        if f.unlink_durable {
            return Err(format!("{path}: unlinked and synced, and still there"));
        }
        if st.size < f.durable_size || st.size > f.max_size {
            return Err(format!(
                "{path}: size {} outside [{}, {}] (durable, largest written)",
                st.size, f.durable_size, f.max_size
            ));
        }
        let ino = fs
            .lookup(path)
            .await
            .map_err(|e| format!("lookup {path}: {e}"))?;
        for (i, b) in f.blocks.iter().enumerate() {
            let at = i as u64 * BLOCK as u64;
            if at >= st.size {
                if b.durable > 0 {
                    return Err(format!("{path} block {i}: durable, past the size"));
                }
                continue;
            }
            buf.fill(0xee);
            let n = fs
                .read(ino, at, &mut buf)
                .await
                .map_err(|e| format!("read {path} block {i}: {e}"))?;
            buf[n..].fill(0);
            let v = version_of(f.id, i as u64, &buf)
                .ok_or_else(|| format!("{path} block {i}: bytes never written to it"))?;
            let floor_ok = v >= b.durable && (v > 0 || b.durable == 0);
            if !floor_ok || v > b.issued {
                return Err(format!(
                    "{path} block {i}: version {v}, durable {}, last issued {}",
                    b.durable, b.issued
                ));
            }
            checked += 1;
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torture::files_log::FileLog;
    use host::fs::MemFs;
    use sim::{Sim, SimInstant};

    fn run(cut_ms: u64, seed: u64) -> (Rc<MemFs>, Log, Sim) {
        let sim = Sim::new(seed);
        let fs = Rc::new(MemFs::new(&sim, 1 << 30));
        let log: SharedLog = Rc::default();
        let failed = Rc::new(RefCell::new(None));
        start(
            fs.clone(),
            &Rng::new(seed),
            3,
            64,
            log.clone(),
            failed.clone(),
        );
        sim.run_until(SimInstant::from_ns(cut_ms * 1_000_000));
        // The writers stop where they stand.
        sim.power_cut();
        assert_eq!(*failed.borrow(), None);
        let log = log.snapshot();
        (fs, log, sim)
    }

    #[test]
    fn a_file_system_that_loses_nothing_passes() {
        for seed in 0..5 {
            let (fs, log, sim) = run(20, seed);
            assert!(log.files.len() > 10, "{} files", log.files.len());
            let n = sim
                .block_on(async move { check(&*fs, &log).await })
                .unwrap();
            assert!(n > 50, "{n} blocks checked");
        }
    }

    #[test]
    fn lost_durable_data_or_stray_bytes_are_caught() {
        let (fs, log, sim) = run(20, 7);
        let durable: Vec<(String, FileLog)> = log
            .files
            .iter()
            .filter(|(_, f)| {
                f.durable && !f.unlink_issued && f.blocks.iter().any(|b| b.durable > 0)
            })
            .map(|(p, f)| (p.clone(), f.clone()))
            .collect();
        assert!(!durable.is_empty());
        let (path, f) = durable[0].clone();
        let block = f.blocks.iter().position(|b| b.durable > 0).unwrap() as u64;
        let (fs2, log2) = (fs.clone(), log.clone());
        // A durable block rolled back to zeros: caught.
        let e = sim
            .block_on(async move {
                let ino = fs2.lookup(&path).await.unwrap();
                fs2.write(ino, block * BLOCK as u64, &[0u8; BLOCK])
                    .await
                    .unwrap();
                check(&*fs2, &log2).await
            })
            .unwrap_err();
        assert!(e.contains("version 0"), "{e}");
        // A file nobody created: caught.
        let (fs3, log3) = (fs.clone(), log.clone());
        let e = sim
            .block_on(async move {
                fs3.create("/w0/stray").await.unwrap();
                check(&*fs3, &log3).await
            })
            .unwrap_err();
        assert!(
            e.contains("never created") || e.contains("version 0"),
            "{e}"
        );
    }
}
