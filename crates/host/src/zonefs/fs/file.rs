//! Files: creating one, appending through ZenFS's 1 MiB buffer ([`FileWriter`]), writing
//! pieces as extents (sparse files with inline length headers), reading extents back, and
//! deleting a name (the file goes with its last link).

use std::rc::Rc;

use super::super::meta::{Extent, FileMeta, Record};
use super::super::plus::{JobKind, WriteClass};
use super::{FsError, Lifetime, OpenFile, ZoneFs, SPARSE_HEADER, WRITE_BUFFER};
use crate::io::HostIo;
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// Open `name` for appending through a 1 MiB buffer.
    pub async fn writer(
        self: &Rc<Self>,
        name: &str,
        lifetime: Lifetime,
    ) -> Result<FileWriter<B>, FsError> {
        self.writer_for(name, lifetime, WriteClass::OTHER).await
    }

    /// Open `name`, written for `class` (the job and level RocksDB tells ZenFS+), for
    /// appending: through a 1 MiB buffer, or under ZenFS+'s policy a flush or compaction
    /// output through a buffer of one stripe (a unit for each zone of its stripe group).
    pub async fn writer_for(
        self: &Rc<Self>,
        name: &str,
        lifetime: Lifetime,
        class: WriteClass,
    ) -> Result<FileWriter<B>, FsError> {
        let id = self.create_for(name, lifetime, class).await?;
        let stripe = self.stripe_bytes(self.class_of(id));
        Ok(FileWriter {
            fs: self.clone(),
            id,
            buf: Vec::with_capacity(stripe.unwrap_or(WRITE_BUFFER)),
            stripe,
        })
    }

    /// Create a file for writing (logged at once, as ZenFS's OpenWritableFile does).
    pub async fn create(&self, name: &str, lifetime: Lifetime) -> Result<u64, FsError> {
        self.create_for(name, lifetime, WriteClass::OTHER).await
    }

    /// [`ZoneFs::create`] for `class`; a `.log` file is a WAL and a `MANIFEST-` file a
    /// MANIFEST whatever the class says.
    pub async fn create_for(
        &self,
        name: &str,
        lifetime: Lifetime,
        class: WriteClass,
    ) -> Result<u64, FsError> {
        let class = if name.ends_with(".log") {
            WriteClass::WAL
        } else if name.starts_with("MANIFEST") {
            WriteClass {
                kind: JobKind::Manifest,
                level: 0,
            }
        } else {
            class
        };
        let meta = {
            let mut st = self.st.borrow_mut();
            if st.names.contains_key(name) {
                return Err(FsError::Exists(name.into()));
            }
            let id = st.next_id;
            st.next_id += 1;
            let meta = FileMeta {
                id,
                lifetime: lifetime as u32,
                // ZenFS: `.log` files (WALs) take the sparse path.
                sparse: name.ends_with(".log"),
                links: vec![name.to_string()],
                ..FileMeta::default()
            };
            st.names.insert(name.to_string(), id);
            st.files.insert(
                id,
                OpenFile {
                    meta: meta.clone(),
                    synced: 0,
                    zone: None,
                    class,
                    group: None,
                    writing: true,
                    readers: 0,
                },
            );
            meta
        };
        let id = meta.id;
        self.log(Record::Update(meta)).await?;
        Ok(id)
    }

    /// Write `data` to file `id` through its zone: padded to blocks, an extent of the real
    /// length per zone it lands in.
    pub(super) async fn write_extent(&self, id: u64, data: &[u8]) -> Result<(), FsError> {
        let mut at = 0usize;
        while at < data.len() {
            let (zone, lifetime, wal, class) = {
                let st = self.st.borrow();
                let f = st
                    .files
                    .get(&id)
                    .ok_or(FsError::NotFound(format!("file {id}")))?;
                (f.zone, f.meta.lifetime, f.meta.sparse, f.class)
            };
            let zi = match zone {
                Some(z) if self.st.borrow().zones[z].remaining() >= 2 * self.block => z,
                old => {
                    if let Some(z) = old {
                        self.release_zone(z).await?;
                    }
                    let z = self.allocate(lifetime, wal, class).await?;
                    self.take_zone(id, z).await?;
                    z
                }
            };
            let (pos, room, sparse) = {
                let st = self.st.borrow();
                let z = &st.zones[zi];
                (z.start + z.wp, z.remaining(), st.files[&id].meta.sparse)
            };
            // Sparse files (WALs) carry each piece's length in an 8-byte header before it, so
            // a data sync needs no metadata and mount can walk what reached the zone.
            let header = if sparse { SPARSE_HEADER } else { 0 };
            let len = (data.len() - at).min(room as usize - header);
            let padded = (header + len) as u64;
            let padded = padded.div_ceil(self.block) * self.block;
            let piece = &data[at..at + len];
            if header == 0 && padded == len as u64 {
                // Block-aligned data goes out as it is: no copy.
                self.io.write(pos, piece).await?;
            } else {
                let mut buf = Vec::with_capacity(padded as usize);
                if sparse {
                    buf.extend_from_slice(&(len as u64).to_le_bytes());
                }
                buf.extend_from_slice(piece);
                buf.resize(padded as usize, 0);
                self.io.write(pos, &buf).await?;
            }
            self.extend(id, zi, pos + header as u64, len as u64, padded)
                .await?;
            at += len;
        }
        Ok(())
    }

    /// Record `len` bytes of file `id` at device offset `start`, which took `taken` bytes of
    /// zone `zi`; a zone with no room left gives its open token back at once, as ZenFS's does
    /// when it becomes full.
    pub(super) async fn extend(
        &self,
        id: u64,
        zi: usize,
        start: u64,
        len: u64,
        taken: u64,
    ) -> Result<(), FsError> {
        let full = {
            let mut st = self.st.borrow_mut();
            let z = &mut st.zones[zi];
            z.wp += taken;
            z.used += len;
            let full = z.remaining() < 2 * self.block;
            let f = st.files.get_mut(&id).expect("file");
            if full {
                f.zone = None;
            }
            f.meta.extents.push(Extent { start, len });
            f.meta.size += len;
            full
        };
        if full {
            self.release_zone(zi).await?;
        }
        Ok(())
    }

    /// Read `buf.len()` bytes of `name` from `offset`; short if the file ends first.
    pub async fn read(&self, name: &str, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let (id, extents) = self.begin_read(name)?;
        let result = self.read_extents(&extents, offset, buf).await;
        self.end_read(id);
        result
    }

    /// A read of `name` starts: its extents, and one more reader (GC waits for none).
    pub(super) fn begin_read(&self, name: &str) -> Result<(u64, Vec<Extent>), FsError> {
        let mut st = self.st.borrow_mut();
        let id = *st
            .names
            .get(name)
            .ok_or_else(|| FsError::NotFound(name.into()))?;
        let f = st.files.get_mut(&id).expect("named file");
        f.readers += 1;
        Ok((id, f.meta.extents.clone()))
    }

    pub(super) fn end_read(&self, id: u64) {
        let mut st = self.st.borrow_mut();
        if let Some(f) = st.files.get_mut(&id) {
            f.readers -= 1;
            if f.readers == 0 {
                self.reads_done.notify_waiters();
            }
        }
    }

    async fn read_extents(
        &self,
        extents: &[Extent],
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, FsError> {
        // The pieces of the range: (device offset, length, offset in `buf`).
        let mut pieces = Vec::new();
        let mut done = 0usize;
        let mut file_off = 0u64;
        for e in extents.iter().copied() {
            if done == buf.len() {
                break;
            }
            let want = offset + done as u64;
            if want >= file_off + e.len {
                file_off += e.len;
                continue;
            }
            let in_ext = want - file_off;
            let n = ((e.len - in_ext) as usize).min(buf.len() - done);
            pieces.push((e.start + in_ext, n, done));
            done += n;
            file_off += e.len;
        }
        // Whole blocks around each piece, as a direct read would.
        let span = |dev: u64, n: usize| {
            let first = dev / self.block * self.block;
            (
                first,
                (dev + n as u64).div_ceil(self.block) * self.block - first,
            )
        };
        if self.plus.is_some() && pieces.len() > 1 {
            // ZenFS+'s host reads a striped file's pieces, on different zones, at once.
            let tasks: Vec<_> = pieces
                .iter()
                .map(|&(dev, n, _)| {
                    let io = self.io.clone();
                    let (first, len) = span(dev, n);
                    self.io.sim().clone().spawn(async move {
                        let mut tmp = vec![0u8; len as usize];
                        io.read(first, &mut tmp).await.map(|()| tmp)
                    })
                })
                .collect();
            for (&(dev, n, at), task) in pieces.iter().zip(tasks) {
                let tmp = task.await?;
                let s = (dev - dev / self.block * self.block) as usize;
                buf[at..at + n].copy_from_slice(&tmp[s..s + n]);
            }
            return Ok(done);
        }
        for (dev, n, at) in pieces {
            let (first, len) = span(dev, n);
            let mut tmp = vec![0u8; len as usize];
            self.io.read(first, &mut tmp).await?;
            let s = (dev - first) as usize;
            buf[at..at + n].copy_from_slice(&tmp[s..s + n]);
        }
        Ok(done)
    }

    /// Remove a name; the file goes with its last link, and zones left with no live data
    /// are reset.
    pub async fn delete(&self, name: &str) -> Result<(), FsError> {
        // A striped file deleted while written lets go of its group first.
        let last_link = {
            let st = self.st.borrow();
            st.names
                .get(name)
                .copied()
                .filter(|id| st.files.get(id).is_some_and(|f| f.meta.links.len() == 1))
        };
        if let Some(id) = last_link {
            self.release_group(id);
        }
        let (id, held) = {
            let mut st = self.st.borrow_mut();
            let id = st
                .names
                .remove(name)
                .ok_or_else(|| FsError::NotFound(name.into()))?;
            let f = st.files.get_mut(&id).expect("file");
            f.meta.links.retain(|l| l != name);
            let mut held = None;
            if f.meta.links.is_empty() {
                let f = st.files.remove(&id).expect("file");
                held = f.zone;
                for e in &f.meta.extents {
                    if let Some(z) = st.zone_of(e.start, self.zone_bytes) {
                        st.zones[z].used -= e.len;
                    }
                }
            }
            (id, held)
        };
        if let Some(z) = held {
            self.release_zone(z).await?;
        }
        self.log(Record::Deletion {
            id,
            link: name.to_string(),
        })
        .await?;
        self.reset_unused_unless_deferred().await
    }
}

/// A file open for appending through ZenFS's 1 MiB buffer.
pub struct FileWriter<B: ZonedBackend = HostIo> {
    fs: Rc<ZoneFs<B>>,
    id: u64,
    buf: Vec<u8>,
    /// A striped file's buffer: one stripe (`None`: ZenFS's 1 MiB).
    stripe: Option<usize>,
}

impl<B: ZonedBackend> FileWriter<B> {
    pub async fn append(&mut self, mut data: &[u8]) -> Result<(), FsError> {
        let cap = self.stripe.unwrap_or(WRITE_BUFFER);
        while !data.is_empty() {
            let n = (cap - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() == cap {
                self.flush().await?;
            }
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), FsError> {
        if !self.buf.is_empty() {
            let data = std::mem::take(&mut self.buf);
            if self.stripe.is_some() {
                self.fs.write_striped(self.id, &data).await?;
            } else {
                self.fs.write_extent(self.id, &data).await?;
            }
            self.buf = data;
            self.buf.clear();
            self.fs.maybe_gc();
            self.fs.maybe_reclaim();
        }
        Ok(())
    }

    /// Append one CCZNS compressed write: `data` is whole blocks (at most the device's
    /// transfer size) holding the chunks of `chunk_sizes` back to back, which the device
    /// compresses. What was appended before goes out first. Returns each chunk's size in the
    /// file (the last one padded to a block); the file grows by their sum.
    pub async fn append_compressed(
        &mut self,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<Vec<u32>, FsError> {
        self.flush().await?;
        let sizes = self.fs.write_compressed(self.id, data, chunk_sizes).await?;
        self.fs.maybe_gc();
        self.fs.maybe_reclaim();
        Ok(sizes)
    }

    /// Everything appended so far is durable: on the device, and for a buffered file in the
    /// metadata log too (a sparse file's data carries its own lengths: no record, as ZenFS's
    /// inline extents).
    pub async fn sync(&mut self) -> Result<(), FsError> {
        self.flush().await?;
        if self.fs.is_sparse(self.id) {
            return Ok(());
        }
        self.fs.sync_meta(self.id, false).await
    }

    pub async fn close(mut self) -> Result<(), FsError> {
        self.flush().await?;
        self.fs.sync_meta(self.id, true).await
    }
}
