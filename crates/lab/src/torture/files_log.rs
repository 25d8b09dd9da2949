//! What the file workload (`files.rs`) was told, kept as a sequence of events: each call is
//! logged before it is issued (a cut or a kill during it may leave it applied or not) and
//! again when it returns. Applying the events in order gives the log the oracle checks
//! against. In a `--kill` child the same events also go, one line each, to an
//! acknowledgement file before the child goes on, and the parent rebuilds the log by
//! replaying the file with the same [`Log::apply`]: one code path for both tortures.
//!
//! Lines: `M` (the file system is made), `C path id` / `c path` (create issued / returned),
//! `W path first n` / `w path` (write of blocks `first..first + n` issued / acknowledged),
//! `F path` / `f path` (fsync), `U path` / `u path` (unlink), `S w` / `s w` (writer `w`'s sync),
//! and `D compactions tl_opens resets`: what the device had done by then (for the report).
//! Paths hold no spaces (the workload names them `/w{i}/f{n}`).

use std::cell::{Ref, RefCell};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::rc::Rc;

use host::fs::FsError;

/// Blocks a file may reach (the torture's volumes are 128 MiB: 32 Ki blocks).
const MAX_FILE_BLOCKS: u64 = 1 << 20;

/// What the log knows of one block.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlockLog {
    /// The version a durability point covers (0: none).
    pub durable: u64,
    /// The last version acknowledged, and the last issued.
    pub acked: u64,
    pub issued: u64,
}

/// What the log knows of one file.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileLog {
    pub id: u64,
    pub blocks: Vec<BlockLog>,
    /// Size acknowledged, largest issued, and made durable.
    pub acked_size: u64,
    pub max_size: u64,
    pub durable_size: u64,
    /// The create returned; created and made durable (fsync or sync acknowledged).
    pub created: bool,
    pub durable: bool,
    /// Unlink issued; acknowledged; a sync acknowledged after it.
    pub unlink_issued: bool,
    pub unlinked: bool,
    pub unlink_durable: bool,
}

impl FileLog {
    /// What a durability point issued now covers once acknowledged: what was acknowledged.
    fn durable_now(&self) -> FileLog {
        let mut s = self.clone();
        if !s.created {
            return s;
        }
        if s.unlinked {
            s.unlink_durable = true;
            return s;
        }
        s.durable = true;
        s.durable_size = s.acked_size;
        for b in &mut s.blocks {
            b.durable = b.acked;
        }
        s
    }

    /// A durability point `s` (taken by [`FileLog::durable_now`] when it was issued) was
    /// acknowledged.
    fn merge_durable(&mut self, s: &FileLog) {
        self.durable |= s.durable;
        self.unlink_durable |= s.unlink_durable;
        self.durable_size = self.durable_size.max(s.durable_size);
        for (b, sb) in self.blocks.iter_mut().zip(&s.blocks) {
            b.durable = b.durable.max(sb.durable);
        }
    }
}

/// One thing the workload was told or is about to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    Made,
    Create {
        path: String,
        id: u64,
    },
    Created {
        path: String,
    },
    Write {
        path: String,
        first: u64,
        n: u64,
    },
    Wrote {
        path: String,
    },
    Fsync {
        path: String,
    },
    Fsynced {
        path: String,
    },
    Unlink {
        path: String,
    },
    Unlinked {
        path: String,
    },
    Sync {
        writer: u32,
    },
    Synced {
        writer: u32,
    },
    /// The device's zone_compactions, TL_opens and resets so far.
    Device([u64; 3]),
}

impl Event {
    fn line(&self) -> String {
        match self {
            Event::Made => "M\n".into(),
            Event::Create { path, id } => format!("C {path} {id}\n"),
            Event::Created { path } => format!("c {path}\n"),
            Event::Write { path, first, n } => format!("W {path} {first} {n}\n"),
            Event::Wrote { path } => format!("w {path}\n"),
            Event::Fsync { path } => format!("F {path}\n"),
            Event::Fsynced { path } => format!("f {path}\n"),
            Event::Unlink { path } => format!("U {path}\n"),
            Event::Unlinked { path } => format!("u {path}\n"),
            Event::Sync { writer } => format!("S {writer}\n"),
            Event::Synced { writer } => format!("s {writer}\n"),
            Event::Device([c, t, r]) => format!("D {c} {t} {r}\n"),
        }
    }

    fn parse(line: &str) -> Option<Event> {
        let f: Vec<&str> = line.split(' ').collect();
        let path = || {
            f.get(1)
                .filter(|p| p.starts_with('/'))
                .map(|p| p.to_string())
        };
        let num = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
        let (want, e) = match f[0] {
            "M" => (1, Event::Made),
            "C" => (
                3,
                Event::Create {
                    path: path()?,
                    id: num(2)?,
                },
            ),
            "c" => (2, Event::Created { path: path()? }),
            "W" => (
                4,
                Event::Write {
                    path: path()?,
                    // A write is at most 16 blocks (`files.rs`) inside a file no larger than
                    // the volume: bounds the replay's memory.
                    first: num(2).filter(|&f| f < MAX_FILE_BLOCKS)?,
                    n: num(3).filter(|&n| n <= 16)?,
                },
            ),
            "w" => (2, Event::Wrote { path: path()? }),
            "F" => (2, Event::Fsync { path: path()? }),
            "f" => (2, Event::Fsynced { path: path()? }),
            "U" => (2, Event::Unlink { path: path()? }),
            "u" => (2, Event::Unlinked { path: path()? }),
            "S" => (
                2,
                Event::Sync {
                    writer: u32::try_from(num(1)?).ok()?,
                },
            ),
            "s" => (
                2,
                Event::Synced {
                    writer: u32::try_from(num(1)?).ok()?,
                },
            ),
            "D" => (4, Event::Device([num(1)?, num(2)?, num(3)?])),
            _ => return None,
        };
        (f.len() == want).then_some(e)
    }
}

/// The log itself: every file by path, and the calls issued and not yet acknowledged.
#[derive(Clone, Debug, Default)]
pub(crate) struct Log {
    /// The file system was made (mkfs returned).
    pub made: bool,
    pub files: BTreeMap<String, FileLog>,
    /// The last zone_compactions, TL_opens and resets the device reported.
    pub device: [u64; 3],
    /// Writes issued: their first block and the versions they write.
    writes: BTreeMap<String, (u64, Vec<u64>)>,
    /// Fsyncs issued, and syncs by writer: what each covers once acknowledged.
    fsyncs: BTreeMap<String, FileLog>,
    syncs: BTreeMap<u32, Vec<(String, FileLog)>>,
}

impl Log {
    /// Apply one event. Err: it does not fit what came before (a bad acknowledgement file).
    pub fn apply(&mut self, e: &Event) -> Result<(), String> {
        let missing = |p: &str| format!("{e:?}: no file {p} in the log");
        match e {
            Event::Made => self.made = true,
            Event::Device(d) => self.device = *d,
            Event::Create { path, id } => {
                self.files.insert(
                    path.clone(),
                    FileLog {
                        id: *id,
                        ..FileLog::default()
                    },
                );
            }
            Event::Created { path } => {
                self.files
                    .get_mut(path)
                    .ok_or_else(|| missing(path))?
                    .created = true
            }
            Event::Write { path, first, n } => {
                let f = self.files.get_mut(path).ok_or_else(|| missing(path))?;
                let end = (first + n) as usize;
                if f.blocks.len() < end {
                    f.blocks.resize(end, BlockLog::default());
                }
                let versions = f.blocks[*first as usize..end]
                    .iter_mut()
                    .map(|b| {
                        b.issued += 1;
                        b.issued
                    })
                    .collect();
                f.max_size = f.max_size.max(end as u64 * super::files::BLOCK as u64);
                self.writes.insert(path.clone(), (*first, versions));
            }
            Event::Wrote { path } => {
                let (first, versions) = self
                    .writes
                    .remove(path)
                    .ok_or_else(|| format!("{e:?} without its write"))?;
                let f = self.files.get_mut(path).ok_or_else(|| missing(path))?;
                for (k, &v) in versions.iter().enumerate() {
                    let b = &mut f.blocks[first as usize + k];
                    b.acked = b.acked.max(v);
                }
                let end = first + versions.len() as u64;
                f.acked_size = f.acked_size.max(end * super::files::BLOCK as u64);
            }
            Event::Fsync { path } => {
                let s = self.files.get(path).ok_or_else(|| missing(path))?;
                self.fsyncs.insert(path.clone(), s.durable_now());
            }
            Event::Fsynced { path } => {
                let s = self
                    .fsyncs
                    .remove(path)
                    .ok_or_else(|| format!("{e:?} without its fsync"))?;
                let f = self.files.get_mut(path).ok_or_else(|| missing(path))?;
                f.merge_durable(&s);
            }
            Event::Unlink { path } => {
                self.files
                    .get_mut(path)
                    .ok_or_else(|| missing(path))?
                    .unlink_issued = true
            }
            Event::Unlinked { path } => {
                self.files
                    .get_mut(path)
                    .ok_or_else(|| missing(path))?
                    .unlinked = true
            }
            Event::Sync { writer } => {
                // Only what the writers had acknowledged when the sync was issued.
                let s = self
                    .files
                    .iter()
                    .map(|(p, f)| (p.clone(), f.durable_now()))
                    .collect();
                self.syncs.insert(*writer, s);
            }
            Event::Synced { writer } => {
                let s = self
                    .syncs
                    .remove(writer)
                    .ok_or_else(|| format!("{e:?} without its sync"))?;
                for (path, s) in s {
                    if let Some(f) = self.files.get_mut(&path) {
                        f.merge_durable(&s);
                    }
                }
            }
        }
        Ok(())
    }

    /// Blocks written (issued) to all files, unlinked ones too.
    pub fn blocks_written(&self) -> u64 {
        self.files
            .values()
            .flat_map(|f| &f.blocks)
            .map(|b| b.issued)
            .sum()
    }

    /// Rebuild the log from an acknowledgement file's text; a torn last line (the kill came
    /// mid-write) is dropped.
    pub fn replay(text: &str) -> Result<Log, String> {
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        let mut log = Log::default();
        for line in complete.lines() {
            let e = Event::parse(line)
                .ok_or_else(|| format!("acknowledgement file: bad line {line:?}"))?;
            log.apply(&e)
                .map_err(|m| format!("acknowledgement file: {m}"))?;
        }
        Ok(log)
    }
}

/// The log the writers share, and where a `--kill` child writes its events (None: not a child).
#[derive(Default)]
pub(crate) struct FilesLog {
    log: RefCell<Log>,
    journal: Option<RefCell<File>>,
}

/// Shared by the writer tasks.
pub(crate) type SharedLog = Rc<FilesLog>;

impl FilesLog {
    /// A log that also writes every event to `journal`, one unbuffered write per line: once
    /// [`FilesLog::record`] returns, a kill cannot take the line back.
    pub fn with_journal(journal: File) -> FilesLog {
        FilesLog {
            log: RefCell::default(),
            journal: Some(RefCell::new(journal)),
        }
    }

    /// Apply `e` and write it to the journal, if any.
    pub fn record(&self, e: Event) -> Result<(), FsError> {
        self.log.borrow_mut().apply(&e).map_err(FsError::Io)?;
        if let Some(j) = &self.journal {
            j.borrow_mut()
                .write_all(e.line().as_bytes())
                .map_err(|err| FsError::Io(format!("acknowledgement file: {err}")))?;
        }
        Ok(())
    }

    pub fn get(&self) -> Ref<'_, Log> {
        self.log.borrow()
    }

    /// The log as it stands.
    pub fn snapshot(&self) -> Log {
        self.log.borrow().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_bad_ones_are_refused() {
        let events = [
            Event::Made,
            Event::Create {
                path: "/w0/f1".into(),
                id: 7,
            },
            Event::Created {
                path: "/w0/f1".into(),
            },
            Event::Write {
                path: "/w0/f1".into(),
                first: 3,
                n: 16,
            },
            Event::Wrote {
                path: "/w0/f1".into(),
            },
            Event::Fsync {
                path: "/w0/f1".into(),
            },
            Event::Fsynced {
                path: "/w0/f1".into(),
            },
            Event::Sync { writer: 2 },
            Event::Synced { writer: 2 },
            Event::Device([5, 1, 2]),
            Event::Unlink {
                path: "/w0/f1".into(),
            },
            Event::Unlinked {
                path: "/w0/f1".into(),
            },
        ];
        for e in &events {
            let l = e.line();
            assert_eq!(Event::parse(l.trim_end()).as_ref(), Some(e), "{l}");
        }
        for bad in [
            "W /w0/f1 0 17",
            "W /w0/f1 18446744073709551615 1",
            "W /w0/f1 0",
            "C f1 3",
            "S -1",
            "M 1",
            "X",
            "",
        ] {
            assert_eq!(Event::parse(bad), None, "{bad}");
        }
        // An acknowledgement without what it acknowledges: refused, not a panic.
        assert!(Log::replay("w /w0/f1\n").is_err());
        assert!(Log::replay("C /w0/f1 1\nw /w0/f1\n").is_err());
    }

    #[test]
    fn a_replayed_journal_is_the_log_the_writer_kept() {
        let dir = std::env::temp_dir().join(format!("znslab-files-log-{}", std::process::id()));
        let path = dir.with_extension("acks");
        let log = FilesLog::with_journal(File::create(&path).unwrap());
        let p = || "/w1/f0".to_string();
        for e in [
            Event::Made,
            Event::Create { path: p(), id: 9 },
            Event::Created { path: p() },
            Event::Write {
                path: p(),
                first: 0,
                n: 4,
            },
            Event::Wrote { path: p() },
            Event::Fsync { path: p() },
            Event::Write {
                path: p(),
                first: 2,
                n: 3,
            },
            Event::Fsynced { path: p() },
            Event::Sync { writer: 1 },
            // Issued, never acknowledged: the kill came.
            Event::Write {
                path: p(),
                first: 5,
                n: 1,
            },
        ] {
            log.record(e).unwrap();
        }
        let mut text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        // A torn last line is dropped.
        text.push_str("s 1");
        let replayed = Log::replay(&text).unwrap();
        let kept = log.snapshot();
        assert!(replayed.made);
        let (a, b) = (&replayed.files[&p()], &kept.files[&p()]);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(a.durable_size, 4 * 4096);
        assert_eq!(a.max_size, 6 * 4096);
        assert_eq!(
            a.blocks.iter().map(|b| b.issued).collect::<Vec<_>>(),
            [1, 1, 2, 2, 1, 1]
        );
        assert_eq!(a.blocks[2].durable, 1);
    }
}
