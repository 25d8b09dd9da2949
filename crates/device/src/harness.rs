//! A device configuration and a short command sequence from arbitrary bytes, for the
//! `device_config` fuzz target and the tests that run the same harness on stable Rust.
//!
//! The input is a device TOML file, then (after a NUL byte, if any) the bytes that choose the
//! commands: writes at write pointers and elsewhere, appends, reads, zone management (every
//! action, Select All), report zones, compressed writes and decompressed reads, flushes,
//! deallocations, ZNS+'s zone compactions and identify_mapping, and power cycles. The device lives in memory within a memory budget: its
//! tables must fit ([`DeviceConfig::layout_within`]), and so must one zone's bytes, which the
//! memory store reserves whole on the zone's first write. Nothing here may panic.

use sim::SimInstant;

use crate::cmd::wire;
use crate::cmd::{Command, ZoneAction};
use crate::config::DeviceConfig;
use crate::controller::Controller;
use crate::layout::Layout;
use crate::ConfigError;

/// Commands one input runs at most.
pub const MAX_COMMANDS: usize = 64;
/// Blocks one generated data command carries at most (keeps buffers small).
const MAX_BLOCKS: u64 = 16;
/// Program units a Finish or Reset (of one zone, or Select All) may make the flash model walk
/// through one at a time: beyond these the harness closes the zone instead, or sends the
/// command to one zone (for the fuzzer's speed; the device takes them all).
const MAX_ZONE_UNITS: u64 = 1 << 18;
const MAX_SELECT_ALL_UNITS: u64 = 1 << 22;

/// What one input did.
#[derive(Debug)]
pub enum Outcome {
    /// The TOML part did not parse as a device configuration.
    NotADevice(ConfigError),
    /// The configuration was refused (the error names the field).
    Refused(ConfigError),
    /// The device was made and the commands ran.
    Ran {
        commands: usize,
        succeeded: usize,
        /// Host memory the device's data bytes and tables take after the run.
        resident_bytes: u64,
        table_bytes: u64,
    },
}

/// Split an input into the TOML text and the command bytes (after the first NUL).
pub fn split_input(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// Bytes one zone takes in a memory store once written (reserved whole on its first write).
pub fn memory_zone_bytes(l: &Layout) -> u64 {
    l.zone_capacity_lbas
        .saturating_mul(l.lba_bytes.saturating_add(l.metadata_bytes))
}

/// Parse `data`, make the device in memory within `memory_budget` bytes, and run the commands
/// the rest of `data` chooses.
pub fn run(data: &[u8], memory_budget: u64) -> Outcome {
    let (text, ops) = split_input(data);
    let text = String::from_utf8_lossy(text);
    let cfg = match DeviceConfig::from_toml(&text) {
        Ok(c) => c,
        Err(e) => return Outcome::NotADevice(e),
    };
    run_config(cfg, ops, memory_budget)
}

/// Make `cfg`'s device in memory within `memory_budget` bytes and run the commands `ops`
/// chooses.
pub fn run_config(cfg: DeviceConfig, ops: &[u8], memory_budget: u64) -> Outcome {
    let layout = match cfg.layout_within(memory_budget) {
        Ok(l) => l,
        Err(e) => return Outcome::Refused(e),
    };
    let zone_bytes = memory_zone_bytes(&layout);
    if zone_bytes > memory_budget / 2 {
        return Outcome::Refused(crate::config::err(
            "zones.capacity_bytes",
            format!(
                "a zone of {zone_bytes} bytes in memory is more than half the memory budget \
                 ({memory_budget} bytes)"
            ),
        ));
    }
    let mut c = match Controller::in_memory(cfg) {
        Ok(c) => c,
        Err(e) => panic!("layout_within accepted a configuration in_memory refused: {e}"),
    };
    c.set_decompress_memo_bytes(1 << 20);
    let l = c.layout().clone();
    let zone_units = l.zone_capacity_bytes() / l.geometry.unit_bytes.max(1);
    let device_units = (l.zone_count as u64).saturating_mul(zone_units);
    let mut r = Reader(ops);
    let mut now = SimInstant::ZERO;
    let (mut commands, mut succeeded) = (0, 0);
    let lba = l.lba_bytes;
    let ms = l.metadata_bytes;
    let max_blocks = (l.max_transfer_bytes / lba).clamp(1, MAX_BLOCKS);
    let mut data = Vec::new();
    let mut meta = Vec::new();
    while !r.0.is_empty() && commands < MAX_COMMANDS {
        let op = r.u8();
        let zone = (r.u16() as u32) % l.zone_count;
        let d = c.zone(zone);
        let nlb = 1 + (r.u8() as u64 % max_blocks) as u32;
        let with_meta = ms > 0 && r.u8() & 1 == 1;
        let bytes = nlb as usize * lba as usize;
        let meta_len = if with_meta {
            nlb as usize * ms as usize
        } else {
            0
        };
        fill(&mut data, bytes, r.u8());
        meta.clear();
        meta.resize(meta_len, 0xa5);
        let comp = match op % 14 {
            0 => c.submit(
                now,
                Command::Write {
                    slba: if d.wp == u64::MAX { d.zslba } else { d.wp },
                    nlb,
                    data: &data,
                    metadata: &meta,
                },
            ),
            1 => c.submit(
                now,
                Command::Write {
                    slba: r.u64() % l.namespace_lbas().saturating_add(8),
                    nlb,
                    data: &data,
                    metadata: &meta,
                },
            ),
            2 => c.submit(
                now,
                Command::ZoneAppend {
                    zslba: d.zslba,
                    nlb,
                    data: &data,
                    metadata: &meta,
                },
            ),
            3 => {
                let slba = d.zslba + r.u32() as u64 % l.zone_size_lbas.max(1);
                c.submit(
                    now,
                    Command::Read {
                        slba,
                        nlb,
                        data: &mut data,
                        metadata: &mut meta,
                    },
                )
            }
            4 => {
                let action = ZoneAction::from_code(r.u8() % 8);
                let action = if r.u8() & 1 == 1 && action == ZoneAction::Open {
                    ZoneAction::OpenPadding
                } else {
                    action
                };
                let select_all = r.u8() & 1 == 1 && device_units <= MAX_SELECT_ALL_UNITS;
                let flash_work = matches!(action, ZoneAction::Finish | ZoneAction::Reset);
                let action = if flash_work && zone_units > MAX_ZONE_UNITS {
                    ZoneAction::Close
                } else {
                    action
                };
                c.submit(
                    now,
                    Command::ZoneMgmtSend {
                        slba: d.zslba,
                        action,
                        select_all,
                    },
                )
            }
            5 => {
                let len = (r.u16() as usize % 8192) & !3;
                let mut buf = vec![0u8; len];
                c.submit(
                    now,
                    Command::ZoneMgmtRecv {
                        slba: d.zslba,
                        filter: r.u8() % 8,
                        partial: r.u8() & 1 == 1,
                        extended: r.u8() & 1 == 1,
                        buffer: &mut buf,
                    },
                )
            }
            6 => {
                // A compressed write of 1-4 chunks at the zone's byte write pointer.
                let chunks = 1 + r.u8() as usize % 4;
                let mut sizes = Vec::with_capacity(chunks);
                let mut left = bytes as u32;
                for k in 0..chunks {
                    let s = if k + 1 == chunks {
                        left
                    } else {
                        (1 + r.u16() as u32 % left.max(1)).min(left)
                    };
                    if s == 0 {
                        break;
                    }
                    sizes.push(s);
                    left -= s;
                }
                meta.clear();
                meta.resize(nlb as usize * ms as usize, 0);
                wire::put_cw_request(&mut meta, &sizes);
                let append = r.u8() & 1 == 1;
                let (slba, intra) = if append {
                    (d.zslba, 0)
                } else {
                    (d.zslba + d.byte_wp / lba, (d.byte_wp % lba) as u32)
                };
                c.submit(
                    now,
                    Command::CompressedWrite {
                        slba,
                        intra,
                        nlb,
                        data: &data,
                        metadata: &mut meta,
                        append,
                    },
                )
            }
            7 => {
                let off = r.u32() as u64 % d.byte_wp.max(1);
                meta.clear();
                meta.resize(nlb as usize * ms as usize, 0);
                c.submit(
                    now,
                    Command::DecompressedRead {
                        slba: d.zslba + off / lba,
                        intra: (off % lba) as u32,
                        cnlb: 1 + r.u8() as u32 % 255,
                        pdsz: r.u16() as u32 % lba as u32,
                        multi: r.u8() & 1 == 1,
                        nlb,
                        data: &mut data,
                        metadata: &mut meta,
                    },
                )
            }
            8 => c.submit(now, Command::Flush),
            9 => {
                let slba = r.u64() % l.namespace_lbas().saturating_add(8);
                c.submit(
                    now,
                    Command::Deallocate {
                        slba,
                        nlb: 1 + r.u16() as u32,
                    },
                )
            }
            10 => {
                // zone_compaction: blocks of a random zone below its write pointer (or not) to
                // this zone's write pointer (or near it).
                let from = c.zone(r.u16() as u32 % l.zone_count);
                let n = nlb as u64;
                let wp = if d.wp == u64::MAX { d.zslba } else { d.wp };
                let skew = (r.u8() % 4) as u64;
                let pairs: Vec<(u64, u64)> = (0..n)
                    .map(|i| {
                        (
                            from.zslba + (r.u8() as u64 + i) % (l.zone_size_lbas + 2),
                            wp + skew / 3 + i,
                        )
                    })
                    .collect();
                c.submit(
                    now,
                    Command::ZoneCompaction {
                        zslba: d.zslba + skew % 2,
                        pairs: &pairs,
                    },
                )
            }
            11 => {
                data.resize(4096 - (r.u8() % 2) as usize, 0);
                c.submit(now, Command::IdentifyMapping { data: &mut data })
            }
            12 => {
                // TL_open: a bitmap of random runs below the write pointer (or not), sometimes
                // short, sometimes close only.
                let wp = if d.wp == u64::MAX { d.zslba } else { d.wp };
                let written = wp - d.zslba + (r.u8() % 8 == 0) as u64;
                let mut map = vec![0u8; d.capacity.div_ceil(8) as usize];
                let density = r.u8() % 4;
                for i in 0..written.min(d.capacity) {
                    if r.u8() % 4 < density {
                        map[(i / 8) as usize] |= 1 << (i % 8);
                    }
                }
                map.truncate(map.len() - (r.u8() % 16 == 0) as usize);
                c.submit(
                    now,
                    Command::TlOpen {
                        zslba: d.zslba + (r.u8() % 16 == 0) as u64,
                        close_only: r.u8() % 6 == 0,
                        bitmap: &map,
                    },
                )
            }
            _ => {
                c.power_cycle();
                commands += 1;
                continue;
            }
        };
        commands += 1;
        if comp.status == crate::Status::SUCCESS {
            succeeded += 1;
        }
        // Half the time the next command waits for this one; otherwise they overlap.
        if r.u8() & 1 == 1 {
            now = now.max(comp.done_at);
        }
    }
    Outcome::Ran {
        commands,
        succeeded,
        resident_bytes: c.resident_bytes(),
        table_bytes: l.table_bytes,
    }
}

/// `len` bytes of data that compress about as `kind` says (zeros, text-like, or random-ish).
fn fill(buf: &mut Vec<u8>, len: usize, kind: u8) {
    buf.clear();
    buf.resize(len, 0);
    let mut x = kind as u32 | 1;
    match kind % 3 {
        0 => {}
        1 => {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = b"the quick brown fox "[i % 20];
            }
        }
        _ => {
            for b in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                *b = x as u8;
            }
        }
    }
}

/// Reads numbers off the front of the input; zeros once it runs out.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}
