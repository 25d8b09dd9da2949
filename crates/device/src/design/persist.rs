//! Commit points: how the image comes to hold what a command applied (the order is described
//! in `storage.rs`). Designs that keep zone bytes in zones save the zone records a command
//! changed; designs with their own flash map ([`Tables`]) write their new flash bytes and one
//! journal record of the zone records and table entries changed, and checkpoint their tables
//! when the journal grows and at close. Loading reads all of it back.

use std::io;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::{to_raw_value, RawValue};

use super::{Design, Media};
use crate::image::{decode_zone, encode_zone, RECORD_BYTES};
use crate::status::Status;
use crate::storage::{ImageFile, Storage};
use crate::zone::Zone;

/// A design's own tables (a flash map), kept in the image as checkpoints and a journal. For
/// designs inside this crate (the image file is not public).
#[allow(private_interfaces)]
pub trait Tables {
    /// Write the flash bytes the image lacks (before any record that points at them).
    fn persist_bytes(&mut self, img: &ImageFile) -> io::Result<()>;
    /// What changed since the last record or checkpoint (None: nothing), as JSON.
    fn take_delta(&mut self) -> io::Result<Option<Box<RawValue>>>;
    /// The whole tables, for a checkpoint (what changed is recorded by it).
    fn saved(&mut self) -> io::Result<Box<RawValue>>;
    /// Rebuild from a checkpoint and the journal records after it. Returns the bytes still in
    /// partial program units (they sit in the capacitor-protected buffer).
    fn restore(&mut self, saved: &RawValue, deltas: &[Box<RawValue>], unit: u64)
        -> io::Result<u64>;
}

/// A design's tables as typed values: a whole checkpoint and the delta of one command. Every
/// type that has them has [`Tables`], their JSON in the image.
pub(crate) trait TypedTables {
    type Saved: Serialize + DeserializeOwned;
    type Delta: Serialize + DeserializeOwned;
    fn persist_bytes(&mut self, img: &ImageFile) -> io::Result<()>;
    fn take_delta(&mut self) -> Option<Self::Delta>;
    fn saved(&mut self) -> Self::Saved;
    fn restore(
        &mut self,
        saved: Self::Saved,
        deltas: Vec<Self::Delta>,
        unit: u64,
    ) -> io::Result<u64>;
}

impl<T: TypedTables> Tables for T {
    fn persist_bytes(&mut self, img: &ImageFile) -> io::Result<()> {
        TypedTables::persist_bytes(self, img)
    }

    fn take_delta(&mut self) -> io::Result<Option<Box<RawValue>>> {
        TypedTables::take_delta(self)
            .map(|d| to_raw_value(&d).map_err(json_err))
            .transpose()
    }

    fn saved(&mut self) -> io::Result<Box<RawValue>> {
        to_raw_value(&TypedTables::saved(self)).map_err(json_err)
    }

    fn restore(
        &mut self,
        saved: &RawValue,
        deltas: &[Box<RawValue>],
        unit: u64,
    ) -> io::Result<u64> {
        let bad = |e: serde_json::Error| io::Error::new(io::ErrorKind::InvalidData, e);
        let saved = serde_json::from_str(saved.get()).map_err(bad)?;
        let deltas = deltas
            .iter()
            .map(|d| serde_json::from_str(d.get()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        TypedTables::restore(self, saved, deltas, unit)
    }
}

/// The controller's marks of what the image has not recorded yet, lent to a commit.
pub(crate) struct JournalMarks<'a> {
    pub dirty_zones: &'a mut Vec<u32>,
    pub zone_is_dirty: &'a mut Vec<bool>,
    /// A design table's journal record failed to reach the image: the next commit writes a
    /// whole checkpoint instead.
    pub tables_unrecorded: &'a mut bool,
    /// The last failure writing the image, for the error a user sees.
    pub image_error: &'a mut Option<String>,
}

impl JournalMarks<'_> {
    fn take_dirty(&mut self) -> Vec<u32> {
        let zones = std::mem::take(self.dirty_zones);
        for &zi in &zones {
            self.zone_is_dirty[zi as usize] = false;
        }
        zones
    }

    fn mark(&mut self, zi: u32) {
        if !self.zone_is_dirty[zi as usize] {
            self.zone_is_dirty[zi as usize] = true;
            self.dirty_zones.push(zi);
        }
    }
}

/// A zone's record in a checkpoint or journal record (the image's 32 bytes, as numbers).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct ZoneRecord {
    state: u8,
    attributes: u8,
    padding: bool,
    wp: u64,
    bytes: u64,
}

impl ZoneRecord {
    fn of(z: &Zone) -> ZoneRecord {
        let rec = encode_zone(z);
        ZoneRecord {
            state: rec[0],
            attributes: rec[1],
            padding: rec[2] == 1,
            wp: u64::from_le_bytes(rec[8..16].try_into().expect("8 bytes")),
            bytes: u64::from_le_bytes(rec[16..24].try_into().expect("8 bytes")),
        }
    }

    fn encode(self) -> [u8; RECORD_BYTES as usize] {
        let mut rec = [0u8; RECORD_BYTES as usize];
        rec[0] = self.state;
        rec[1] = self.attributes;
        rec[2] = self.padding as u8;
        rec[8..16].copy_from_slice(&self.wp.to_le_bytes());
        rec[16..24].copy_from_slice(&self.bytes.to_le_bytes());
        rec
    }
}

/// A design's whole tables and every zone record, as a checkpoint holds them. Images written
/// before the design seam named the tables by design (`balloon`, `tcssd`); they still load.
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    zones: Vec<ZoneRecord>,
    #[serde(default)]
    tables: Option<Box<RawValue>>,
    #[serde(default, skip_serializing)]
    balloon: Option<Box<RawValue>>,
    #[serde(default, skip_serializing)]
    tcssd: Option<Box<RawValue>>,
}

/// What one command (or the part of one before an erase) changed.
#[derive(Serialize, Deserialize)]
struct JournalRecord {
    zones: Vec<(u32, ZoneRecord)>,
    #[serde(default)]
    tables: Option<Box<RawValue>>,
    #[serde(default, skip_serializing)]
    balloon: Option<Box<RawValue>>,
    #[serde(default, skip_serializing)]
    tcssd: Option<Box<RawValue>>,
}

fn json_err(e: serde_json::Error) -> io::Error {
    io::Error::other(e)
}

/// Make the image hold what was applied so far. A failed image write fails the command with
/// Internal Error and names the cause in the marks' `image_error`.
pub(crate) fn commit(m: &mut Media, design: &mut dyn Design) -> Result<(), Status> {
    if !m.storage.is_image() || m.storage.is_read_only() {
        // Nothing to record: forget the marks, keeping the list's buffer.
        for &zi in m.journal.dirty_zones.iter() {
            m.journal.zone_is_dirty[zi as usize] = false;
        }
        m.journal.dirty_zones.clear();
        return Ok(());
    }
    let result = match design.tables() {
        Some(tables) => journal_changes(m, tables),
        None => save_dirty_zones(m),
    };
    // With `sync` on, what a command changed survives the host's power loss before the host
    // hears of it, as a drive with power-loss protection promises.
    let result = result.and_then(|()| match &*m.storage {
        Storage::Image(img) => img.sync_if_asked(),
        Storage::Memory(..) => Ok(()),
    });
    result.map_err(|e| {
        note_image_error(m.storage, m.journal.image_error, "write", &e);
        Status::INTERNAL_ERROR
    })
}

pub(crate) fn note_image_error(
    storage: &Storage,
    slot: &mut Option<String>,
    what: &str,
    e: &io::Error,
) {
    let hint = if e.raw_os_error() == Some(libc::ENOSPC) {
        " (the file system holding the image is full)"
    } else {
        ""
    };
    *slot = Some(match storage {
        Storage::Image(img) => format!("image {}: {what} failed: {e}{hint}", img.path().display()),
        Storage::Memory(..) => format!("{what} failed: {e}"),
    });
}

fn save_dirty_zones(m: &mut Media) -> io::Result<()> {
    let dirty = m.journal.take_dirty();
    let Storage::Image(img) = &*m.storage else {
        return Ok(());
    };
    for (n, &zi) in dirty.iter().enumerate() {
        if let Err(e) = img.save_zone(zi as usize, &m.zones[zi as usize]) {
            // Mark the rest again so a later command retries them.
            for &z in &dirty[n..] {
                m.journal.mark(z);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// New flash bytes first, then one journal record of the zones and table entries changed; a
/// checkpoint instead when the journal is full or large.
fn journal_changes(m: &mut Media, tables: &mut dyn Tables) -> io::Result<()> {
    if *m.journal.tables_unrecorded {
        // A record was lost to an image error (its changes are no longer marked): only a
        // whole checkpoint records them now.
        checkpoint(m, Some(tables))?;
        *m.journal.tables_unrecorded = false;
        return Ok(());
    }
    let r = journal_record(m, tables);
    if r.is_err() {
        *m.journal.tables_unrecorded = true;
    }
    r
}

fn journal_record(m: &mut Media, tables: &mut dyn Tables) -> io::Result<()> {
    let Storage::Image(img) = &mut *m.storage else {
        return Ok(());
    };
    tables.persist_bytes(img)?;
    let dirty = m.journal.take_dirty();
    let record = JournalRecord {
        zones: dirty
            .iter()
            .map(|&zi| (zi, ZoneRecord::of(&m.zones[zi as usize])))
            .collect(),
        tables: tables.take_delta()?,
        balloon: None,
        tcssd: None,
    };
    if record.zones.is_empty() && record.tables.is_none() {
        return Ok(());
    }
    let payload = serde_json::to_vec(&record).map_err(json_err)?;
    if !img.log_append(&payload)? || img.log_wants_checkpoint() {
        checkpoint(m, Some(tables))?;
    }
    Ok(())
}

/// Write the whole of a design's tables with every zone record, or every zone record (designs
/// without tables).
pub(crate) fn checkpoint(m: &mut Media, tables: Option<&mut dyn Tables>) -> io::Result<()> {
    let Storage::Image(img) = &mut *m.storage else {
        return Ok(());
    };
    if img.is_read_only() {
        return Ok(());
    }
    let Some(tables) = tables else {
        m.journal.take_dirty();
        for (zi, z) in m.zones.iter().enumerate() {
            img.save_zone(zi, z)?;
        }
        return img.sync_if_asked();
    };
    tables.persist_bytes(img)?;
    m.journal.take_dirty();
    let table = Checkpoint {
        zones: m.zones.iter().map(ZoneRecord::of).collect(),
        tables: Some(tables.saved()?),
        balloon: None,
        tcssd: None,
    };
    let json = serde_json::to_vec(&table).map_err(json_err)?;
    img.log_checkpoint(&json)
}

/// Load zone records, the newest checkpoint and the journal after it (designs with tables).
/// Returns the bytes the design holds in partial program units.
pub(crate) fn load_tables(
    img: &mut ImageFile,
    zones: &mut [Zone],
    tables: &mut dyn Tables,
    lba: u64,
    unit: u64,
) -> io::Result<u64> {
    let Some(crate::image::Logged {
        checkpoint: table,
        records,
    }) = img.log_load()?
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "no design table checkpoint (the image was not finished being created)",
        ));
    };
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let cp: Checkpoint =
        serde_json::from_slice(&table).map_err(|e| bad(format!("checkpoint: {e}")))?;
    if cp.zones.len() != zones.len() {
        return Err(bad("checkpoint: zone count differs".into()));
    }
    let mut recs: Vec<ZoneRecord> = cp.zones;
    let mut deltas = Vec::new();
    for (n, r) in records.iter().enumerate() {
        let r: JournalRecord =
            serde_json::from_slice(r).map_err(|e| bad(format!("journal record {n}: {e}")))?;
        for (zi, z) in r.zones {
            *recs
                .get_mut(zi as usize)
                .ok_or_else(|| bad(format!("journal record {n}: zone {zi}")))? = z;
        }
        deltas.extend(r.tables.or(r.balloon).or(r.tcssd));
    }
    for (z, r) in zones.iter_mut().zip(&recs) {
        decode_zone(&r.encode(), z, lba)?;
    }
    match cp.tables.or(cp.balloon).or(cp.tcssd) {
        Some(saved) => tables.restore(&saved, &deltas, unit),
        None => Ok(0),
    }
}
