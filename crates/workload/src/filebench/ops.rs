//! The flowops, each as `flowop_library.c` does it: which file it picks (existing or not,
//! in rotation), what it calls, what it counts (`flowop_endop`'s bytes, reads, writes),
//! and when it fails (FILEBENCH_ERROR, stopping the run) or finds no file (FILEBENCH_NORSC).

use std::future::Future;

use host::fs::{FileSystem, FsError};
use sim::{SimDuration, SimInstant};

use super::engine::{Fd, Out, Shared, ThreadState};
use super::fileset::What;
use super::model::{Flowop, Kind};
use super::random::fb_random64;

/// Bounds one I/O (filebench has none; memory here is the host's).
const MAX_IOSIZE: u64 = 1 << 30;
/// sizeof(struct dirent) on Linux x86-64: listdir counts `strlen(d_name) + 280 - 1` bytes.
const DIRENT: u64 = 280;

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(o) => return o,
        }
    };
}

/// A flowop with no `filesetname` whose `fd` is not open: filebench's "flowop NO fileset".
fn no_fileset(fo: &Flowop) -> Out {
    Out::Error(format!(
        "flowop {}: NO fileset (no filesetname, and fd {} is not open)",
        fo.name, fo.fd
    ))
}

fn fs_err(fo: &Flowop, what: &str, e: impl std::fmt::Display) -> Out {
    Out::Error(format!("flowop {}: {what} failed: {e}", fo.name))
}

/// The flowops' `fileset_pick`: an entry of fileset `set`, existing or not, at the flowop's
/// `indexed` draw (for a leaf directory scaled by half their number) or in rotation; held
/// busy until `Shared::unbusy`. None there is FILEBENCH_NORSC.
async fn pick_entry<F: FileSystem>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    fo: &Flowop,
    set: usize,
    what: What,
    exists: bool,
) -> Result<u32, Out> {
    let index = fo.indexed.as_ref().map(|n| {
        let n = n.get(&mut ts.rng);
        match what {
            What::File => n,
            What::LeafDir => n.saturating_mul(sh.sets[set].borrow().leafdirs.len() as u64 / 2),
        }
    });
    match sh.pick(set, what, exists, index).await {
        Ok(Some(e)) => Ok(e),
        Ok(None) => Err(Out::NoRsc),
        Err(o) => Err(o),
    }
}

/// One system call timed as filebench times it: the clock (the start `flowop_endop` is
/// given), the call's CPU cost (`Shared::sys`), then the call itself.
async fn timed<F: FileSystem, T, Fut: Future<Output = T>>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    call: impl FnOnce() -> Fut,
) -> (SimInstant, T) {
    let t0 = sh.sim.now();
    sh.sys(&mut ts.rng).await;
    (t0, call().await)
}

/// A `timed` call on the picked entry `held` (set, kind, entry) that fails the flowop: on
/// failure the entry is given back unchanged and the flowop fails as "`what` failed".
async fn entry_call<F: FileSystem, T, Fut: Future<Output = Result<T, FsError>>>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    fo: &Flowop,
    held: (usize, What, u32),
    what: &str,
    call: impl FnOnce() -> Fut,
) -> Result<(SimInstant, T), Out> {
    match timed(sh, ts, call).await {
        (t0, Ok(v)) => Ok((t0, v)),
        (_, Err(err)) => {
            let (set, kind, e) = held;
            sh.unbusy(set, kind, e, None, 0);
            Err(fs_err(fo, what, err))
        }
    }
}

/// `flowoplib_openfile_common`: pick an existing file, open it on `fd` (counted on `fo`).
async fn open_common<F: FileSystem>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    gid: usize,
    li: usize,
    fo: &Flowop,
    fd: usize,
) -> Out {
    let Some(set) = fo.fileset else {
        return Out::Error(format!("flowop {}: no fileset to open a file of", fo.name));
    };
    if ts.fds[fd].is_some() {
        return Out::Error(format!(
            "flowop {} attempted to open without closing on fd {fd}",
            fo.name
        ));
    }
    let e = tri!(pick_entry(sh, ts, fo, set, What::File, true).await);
    let path = sh.sets[set].borrow().path(What::File, e);
    let what = format!("open {path}");
    let open = entry_call(sh, ts, fo, (set, What::File, e), &what, || {
        sh.fs.lookup(&path)
    });
    let (t0, ino) = tri!(open.await);
    sh.endop(ts, gid, li, fo, t0, 0);
    ts.fds[fd] = Some(Fd {
        set,
        entry: Some(e),
        ino,
        off: 0,
    });
    sh.unbusy(set, What::File, e, None, 1);
    Out::Ok
}

/// `flowoplib_filesetup`: the fd (opened if it is not), and the working set size.
async fn filesetup<F: FileSystem>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    gid: usize,
    li: usize,
    fo: &Flowop,
) -> Result<u64, Out> {
    let fd = fo.fd;
    if let (Some(open), Some(want)) = (&ts.fds[fd], fo.fileset) {
        if open.set != want {
            let names = (
                sh.sets[open.set].borrow().name.clone(),
                sh.sets[want].borrow().name.clone(),
            );
            return Err(Out::Error(format!(
                "Name of fd referenced fileset name ({}) CONFLICTS with flowop supplied fileset name ({})",
                names.0, names.1
            )));
        }
    }
    if ts.fds[fd].is_none() {
        match open_common(sh, ts, gid, li, fo, fd).await {
            Out::Ok => {}
            o => return Err(o),
        }
    }
    let wss = fo.wss.get(&mut ts.rng);
    if wss != 0 {
        return Ok(wss);
    }
    let f = ts.fds[fd].as_ref().expect("opened above");
    Ok(match f.entry {
        Some(e) => sh.sets[f.set].borrow().files[e as usize].size,
        None => 0,
    })
}

/// `flowoplib_iobufsetup`'s checks.
fn iobuf(ts: &ThreadState, fo: &Flowop, iosize: u64) -> Result<(), Out> {
    if iosize == 0 {
        return Err(Out::Error(format!("zero iosize for thread {}", fo.name)));
    }
    if iosize > MAX_IOSIZE {
        return Err(Out::Error(format!(
            "flowop {}: iosize {iosize} is over 1g",
            fo.name
        )));
    }
    if ts.memsize != 0 && ts.memsize < iosize {
        return Err(Out::Error(format!(
            "tf_memsize smaller than IO size for thread {}",
            fo.name
        )));
    }
    Ok(())
}

/// Write `n` bytes at `off` of the fd's file (then fsync with dsync).
async fn write_at<F: FileSystem>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    fo: &Flowop,
    off: u64,
    n: u64,
) -> Result<(), Out> {
    let ino = ts.fds[fo.fd].as_ref().expect("open").ino;
    let data = sh.data(&mut ts.rng, n as usize);
    sh.sys(&mut ts.rng).await;
    sh.fs
        .write(ino, off, &data)
        .await
        .map_err(|e| fs_err(fo, "write", e))?;
    if fo.dsync {
        sh.fs
            .fsync(ino)
            .await
            .map_err(|e| fs_err(fo, "write (dsync)", e))?;
    }
    Ok(())
}

async fn read_at<F: FileSystem>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    fo: &Flowop,
    off: u64,
    n: u64,
) -> Result<u64, Out> {
    let ino = ts.fds[fo.fd].as_ref().expect("open").ino;
    if ts.buf.len() < n as usize {
        ts.buf.resize(n as usize, 0);
    }
    sh.sys(&mut ts.rng).await;
    let got = sh
        .fs
        .read(ino, off, &mut ts.buf[..n as usize])
        .await
        .map_err(|e| fs_err(fo, "read", e))?;
    Ok(got as u64)
}

/// Run flowop `fo` (master `gid`, `li`-th of its thread) once.
pub(super) async fn flowop<F: FileSystem>(
    sh: &Shared<F>,
    ts: &mut ThreadState,
    gid: usize,
    li: usize,
    fo: &Flowop,
    all: &[Flowop],
) -> Out {
    let fd = fo.fd;
    match fo.kind {
        Kind::Openfile => open_common(sh, ts, gid, li, fo, fd).await,
        Kind::Createfile => {
            if ts.fds[fd].is_some() {
                return Out::Error(format!(
                    "flowop {} attempted to create without closing on fd {fd}",
                    fo.name
                ));
            }
            let Some(set) = fo.fileset else {
                return no_fileset(fo);
            };
            let e = tri!(pick_entry(sh, ts, fo, set, What::File, false).await);
            let path = sh.sets[set].borrow().path(What::File, e);
            let what = format!("create {path}");
            let create = entry_call(sh, ts, fo, (set, What::File, e), &what, || {
                sh.fs.create(&path)
            });
            let (t0, ino) = tri!(create.await);
            sh.endop(ts, gid, li, fo, t0, 0);
            ts.fds[fd] = Some(Fd {
                set,
                entry: Some(e),
                ino,
                off: 0,
            });
            sh.unbusy(set, What::File, e, Some(true), 1);
            Out::Ok
        }
        Kind::Closefile => {
            let Some(open) = ts.fds[fd].clone() else {
                return Out::Error(format!(
                    "flowop {} attempted to close an already closed fd {fd}",
                    fo.name
                ));
            };
            if let Some(e) = open.entry {
                tri!(
                    sh.grab(open.set, What::File, e, |st| st.files[e as usize].open_cnt
                        == 1)
                        .await
                );
            }
            let (t0, ()) = timed(sh, ts, || async {}).await;
            sh.endop(ts, gid, li, fo, t0, 0);
            if let Some(e) = open.entry {
                sh.unbusy(open.set, What::File, e, None, -1);
            }
            ts.fds[fd] = None;
            Out::Ok
        }
        Kind::Deletefile => {
            let via_fd = fd > 0 && ts.fds[fd].as_ref().is_some_and(|f| f.entry.is_some());
            let (set, e) = if via_fd {
                let f = ts.fds[fd].as_mut().expect("checked");
                let (set, e) = (f.set, f.entry.take().expect("checked"));
                tri!(sh.grab(set, What::File, e, |_| true).await);
                (set, e)
            } else {
                let Some(set) = fo.fileset else {
                    return no_fileset(fo);
                };
                (
                    set,
                    tri!(pick_entry(sh, ts, fo, set, What::File, true).await),
                )
            };
            let open_cnt = sh.sets[set].borrow().files[e as usize].open_cnt;
            let mine_open = fd > 0 && ts.fds[fd].is_some();
            if (mine_open && open_cnt > 1) || (!mine_open && open_cnt > 0) {
                // "can't delete file opened by other threads": not counted.
                sh.unbusy(set, What::File, e, None, 0);
                return Out::Ok;
            }
            let path = sh.sets[set].borrow().path(What::File, e);
            // filebench ignores unlink's result
            let (t0, _) = timed(sh, ts, || sh.fs.unlink(&path)).await;
            sh.endop(ts, gid, li, fo, t0, 0);
            sh.unbusy(set, What::File, e, Some(false), -open_cnt);
            Out::Ok
        }
        Kind::Statfile => {
            if fd > 0 && ts.fds[fd].is_some() {
                let f = ts.fds[fd].as_ref().expect("checked");
                if f.entry.is_none() {
                    return Out::Error(format!(
                        "flowop {} trying to stat NULL file at fd = {fd}",
                        fo.name
                    ));
                }
                let ino = f.ino;
                let (t0, _) = timed(sh, ts, || async { sh.fs.size(ino) }).await;
                sh.endop(ts, gid, li, fo, t0, 0);
                return Out::Ok;
            }
            let Some(set) = fo.fileset else {
                return no_fileset(fo);
            };
            let e = tri!(pick_entry(sh, ts, fo, set, What::File, true).await);
            let path = sh.sets[set].borrow().path(What::File, e);
            let (t0, st) = timed(sh, ts, || sh.fs.stat(&path)).await;
            if st.is_err() {
                sh.error(format!("statfile flowop {} failed", fo.name));
            }
            sh.endop(ts, gid, li, fo, t0, 0);
            sh.unbusy(set, What::File, e, None, 0);
            Out::Ok
        }
        Kind::Fsync => {
            let Some(f) = ts.fds[fd].as_ref() else {
                return Out::Error(format!(
                    "flowop {} attempted to fsync a closed fd {fd}",
                    fo.name
                ));
            };
            if f.entry.is_none() {
                return Out::Error(format!(
                    "flowop {} attempted to a fsync a RAW device",
                    fo.name
                ));
            }
            let ino = f.ino;
            let (t0, r) = timed(sh, ts, || sh.fs.fsync(ino)).await;
            if let Err(e) = r {
                return fs_err(fo, "fsync", e);
            }
            sh.endop(ts, gid, li, fo, t0, 0);
            Out::Ok
        }
        Kind::Fsyncset => {
            for i in 0..ts.fds.len() {
                let ino = match &ts.fds[i] {
                    Some(f) if f.entry.is_some() && Some(f.set) == fo.fileset => f.ino,
                    _ => continue,
                };
                let (t0, r) = timed(sh, ts, || sh.fs.fsync(ino)).await;
                if let Err(e) = r {
                    return fs_err(fo, "fsync", e);
                }
                sh.endop(ts, gid, li, fo, t0, 0);
            }
            Out::Ok
        }
        Kind::Readwholefile => {
            let wss = tri!(filesetup(sh, ts, gid, li, fo).await);
            let mut iosize = fo.iosize.get(&mut ts.rng);
            if iosize == 0 {
                iosize = wss;
            }
            if iosize != 0 {
                if let Err(o) = iobuf(ts, fo, iosize) {
                    return o;
                }
            }
            let t0 = sh.sim.now();
            let mut bytes = 0;
            if iosize > 0 {
                loop {
                    let got = tri!(read_at(sh, ts, fo, bytes, iosize).await);
                    if got == 0 {
                        break;
                    }
                    bytes += got;
                }
            } else {
                sh.sys(&mut ts.rng).await;
            }
            ts.fds[fd].as_mut().expect("open").off = bytes;
            sh.endop(ts, gid, li, fo, t0, bytes);
            Out::Ok
        }
        Kind::Writewholefile => {
            let mut wss = tri!(filesetup(sh, ts, gid, li, fo).await);
            let mut iosize = fo.iosize.get(&mut ts.rng);
            if iosize == 0 {
                iosize = wss;
            }
            if iosize != 0 {
                if let Err(o) = iobuf(ts, fo, iosize) {
                    return o;
                }
            }
            let src = fo.srcfd;
            if src != 0 {
                match ts.fds[src]
                    .as_ref()
                    .and_then(|f| f.entry.map(|e| (f.set, e)))
                {
                    Some((set, e)) => wss = sh.sets[set].borrow().files[e as usize].size,
                    None => return Out::Error(format!("flowop {}: NULL src fd", fo.name)),
                }
            }
            let mut wsize = wss.min(iosize);
            let t0 = sh.sim.now();
            let mut bytes = 0;
            let mut seek = 0;
            // As filebench: the next size is computed before `seek` advances.
            while seek < wss {
                let off = ts.fds[fd].as_ref().expect("open").off;
                if wsize == 0 {
                    break;
                }
                tri!(write_at(sh, ts, fo, off, wsize).await);
                ts.fds[fd].as_mut().expect("open").off = off + wsize;
                bytes += wsize;
                let this = wsize;
                wsize = (wss - seek).min(iosize);
                seek += this;
            }
            sh.endop(ts, gid, li, fo, t0, bytes);
            Out::Ok
        }
        Kind::Appendfile | Kind::Appendfilerand => {
            let iosize = fo.iosize.get(&mut ts.rng);
            let n = if fo.kind == Kind::Appendfilerand {
                if iosize == 0 {
                    return Out::Error(format!("flowop {}: zero iosize", fo.name));
                }
                let n = fb_random64(&mut ts.rng, iosize, 1);
                if n == 0 {
                    let t0 = sh.sim.now();
                    sh.endop(ts, gid, li, fo, t0, 0);
                    return Out::Ok;
                }
                n
            } else {
                iosize
            };
            tri!(filesetup(sh, ts, gid, li, fo).await);
            if let Err(o) = iobuf(ts, fo, n) {
                return o;
            }
            let t0 = sh.sim.now();
            let ino = ts.fds[fd].as_ref().expect("open").ino;
            let end = tri!(sh.fs.size(ino).map_err(|e| fs_err(fo, "lseek", e)));
            tri!(write_at(sh, ts, fo, end, n).await);
            ts.fds[fd].as_mut().expect("open").off = end + n;
            sh.endop(ts, gid, li, fo, t0, n);
            Out::Ok
        }
        Kind::Read | Kind::Write => {
            let iosize = fo.iosize.get(&mut ts.rng);
            let wss = tri!(filesetup(sh, ts, gid, li, fo).await);
            if let Err(o) = iobuf(ts, fo, iosize) {
                return o;
            }
            let off = if fo.random {
                if iosize > wss {
                    return Out::Error(format!(
                        "file size smaller than IO size for thread {}",
                        fo.name
                    ));
                }
                fb_random64(&mut ts.rng, wss, iosize)
            } else {
                ts.fds[fd].as_ref().expect("open").off
            };
            let t0 = sh.sim.now();
            let bytes = if fo.kind == Kind::Read {
                let got = tri!(read_at(sh, ts, fo, off, iosize).await);
                let f = ts.fds[fd].as_mut().expect("open");
                if got == 0 {
                    f.off = 0;
                } else if !fo.random {
                    f.off = off + got;
                }
                got
            } else {
                tri!(write_at(sh, ts, fo, off, iosize).await);
                if !fo.random {
                    ts.fds[fd].as_mut().expect("open").off = off + iosize;
                }
                iosize
            };
            sh.endop(ts, gid, li, fo, t0, bytes);
            Out::Ok
        }
        Kind::Makedir | Kind::Removedir => {
            let Some(set) = fo.fileset else {
                return no_fileset(fo);
            };
            let make = fo.kind == Kind::Makedir;
            let e = tri!(pick_entry(sh, ts, fo, set, What::LeafDir, !make).await);
            let path = sh.sets[set].borrow().path(What::LeafDir, e);
            let (t0, _) = timed(sh, ts, || async {
                if make {
                    sh.fs.mkdir(&path).await.map(|_| ())
                } else {
                    sh.fs.rmdir(&path).await
                }
            })
            .await;
            sh.endop(ts, gid, li, fo, t0, 0);
            sh.unbusy(set, What::LeafDir, e, Some(make), 0);
            Out::Ok
        }
        Kind::Listdir => {
            let Some(set) = fo.fileset else {
                return no_fileset(fo);
            };
            let d = loop {
                if sh.aborted() {
                    return Out::Abort;
                }
                let p = sh.sets[set].borrow_mut().pick_dir();
                match p {
                    super::fileset::Pick::Got(d) => break d,
                    super::fileset::Pick::Empty => {
                        return Out::Error(format!(
                            "flowop {} failed to pick directory from fileset",
                            fo.name
                        ))
                    }
                    super::fileset::Pick::Wait => sh.notify.notified().await,
                }
            };
            let path = sh.sets[set].borrow().dir_path(d);
            let (t0, names) = timed(sh, ts, || sh.fs.readdir(&path)).await;
            let names = match names {
                Ok(n) => n,
                Err(e) => {
                    sh.sets[set].borrow_mut().unbusy_dir(d);
                    sh.notify.notify_waiters();
                    return fs_err(fo, &format!("opendir {path}"), e);
                }
            };
            let bytes = names.iter().map(|n| n.len() as u64 + DIRENT - 1).sum();
            sh.endop(ts, gid, li, fo, t0, bytes);
            sh.sets[set].borrow_mut().unbusy_dir(d);
            sh.notify.notify_waiters();
            Out::Ok
        }
        Kind::Delay => {
            let t0 = sh.sim.now();
            let v = fo.value.get(&mut ts.rng);
            sh.sim
                .sleep(SimDuration::from_secs(v.min(u32::MAX as u64)))
                .await;
            sh.endop(ts, gid, li, fo, t0, 0);
            Out::Ok
        }
        Kind::Hog => {
            let t0 = sh.sim.now();
            let v = fo.value.get(&mut ts.rng);
            sh.cpu
                .run(SimDuration::from_ns(
                    v.saturating_mul(sh.cfg.hog_ns_per_iter),
                ))
                .await;
            sh.endop(ts, gid, li, fo, t0, 0);
            Out::Ok
        }
        Kind::Print => {
            sh.info(format!("Message from {}: {}", ts.label, fo.text));
            Out::Ok
        }
        Kind::Eventlimit => {
            if sh.w.eventgen_rate == 0 {
                return Out::Ok;
            }
            let t0 = sh.sim.now();
            sh.events(1).await;
            sh.endop(ts, gid, li, fo, t0, 0);
            Out::Ok
        }
        Kind::Opslimit | Kind::Iopslimit | Kind::Bwlimit => {
            if sh.w.eventgen_rate == 0 {
                return Out::Ok;
            }
            let target = fo
                .target
                .as_ref()
                .and_then(|t| all.iter().position(|g| &g.name == t));
            let now_val = match (fo.kind, target) {
                (Kind::Bwlimit, Some(t)) => ts.local[t].bytes,
                (_, Some(t)) => ts.local[t].count,
                (Kind::Opslimit, None) => sh.control.borrow().count,
                (Kind::Iopslimit, None) => {
                    let c = sh.control.borrow();
                    c.rcount + c.wcount
                }
                (_, None) => {
                    let c = sh.control.borrow();
                    c.bytes
                }
            };
            if ts.last[li] == 0 {
                ts.last[li] = now_val;
                return Out::Ok;
            }
            let delta = now_val.saturating_sub(ts.last[li]);
            ts.bucket[li] -= delta as i64;
            ts.last[li] = now_val;
            let t0 = sh.sim.now();
            if ts.bucket[li] >= 0 {
                sh.endop(ts, gid, li, fo, t0, 0);
                return Out::Ok;
            }
            let owed = ts.bucket[li].unsigned_abs();
            let (events, credit) = if fo.kind == Kind::Bwlimit {
                let ev = owed / (1 << 20) + 1;
                (ev, ev << 20)
            } else {
                (owed, owed)
            };
            sh.events(events).await;
            ts.bucket[li] += credit as i64;
            sh.endop(ts, gid, li, fo, t0, 0);
            Out::Ok
        }
        Kind::Finishoncount | Kind::Finishonbytes => {
            let target = fo
                .target
                .as_ref()
                .and_then(|t| all.iter().position(|g| &g.name == t));
            let limit = fo.value.get(&mut ts.rng);
            let t0 = sh.sim.now();
            let done = if fo.kind == Kind::Finishoncount {
                let ops = match target {
                    Some(t) => ts.local[t].count,
                    None => sh.control.borrow().count,
                };
                ops >= limit
            } else {
                let b = match target {
                    Some(t) => ts.local[t].bytes,
                    None => sh.control.borrow().bytes,
                };
                b > limit
            };
            sh.endop(ts, gid, li, fo, t0, 0);
            if done {
                Out::NoRsc
            } else {
                Out::Ok
            }
        }
    }
}
