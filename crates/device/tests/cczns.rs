//! The CCZNS design: compressed write and decompressed read through their wire encoding,
//! byte-addressable zones, padding zones, OOB chunk records, and reopening an image.

mod common;

use common::Dev;
use device::cmd::wire::{self, IoDwords};
use device::{presets, Command, Completion, Controller, Status, ZoneAction, ZoneState};
use sim::{Rng, SimInstant};

const LBA: usize = 4096;

/// `len` bytes that compress to roughly `1 / ratio` of their size: in every 256-byte block,
/// the first `256 / ratio` bytes are random and the rest zeros (fio's way with
/// buffer_compress_percentage).
fn compressible(rng: &mut Rng, len: usize, ratio: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    let random = 256usize.div_ceil(ratio);
    for block in v.chunks_mut(256) {
        let n = random.min(block.len());
        rng.fill(&mut block[..n]);
    }
    v
}

fn cczns() -> Dev {
    Dev::new(presets::test_cczns())
}

struct Cw {
    comp: Completion,
    feedback: Option<wire::CwFeedback>,
}

/// A CW of `chunks` (back to back, padded up to whole blocks) at byte `intra` of `slba`.
fn cw(d: &mut Dev, slba: u64, intra: u32, chunks: &[Vec<u8>]) -> Cw {
    cw_op(d, wire::OPC_WRITE, slba, intra, chunks)
}

fn cw_op(d: &mut Dev, opcode: u8, slba: u64, intra: u32, chunks: &[Vec<u8>]) -> Cw {
    let total: usize = chunks.iter().map(Vec::len).sum();
    let nlb = total.div_ceil(LBA).max(1);
    let mut data = vec![0u8; nlb * LBA];
    let mut at = 0;
    for c in chunks {
        data[at..at + c.len()].copy_from_slice(c);
        at += c.len();
    }
    let mut md = vec![0u8; nlb * d.ms()];
    let sizes: Vec<u32> = chunks.iter().map(|c| c.len() as u32).collect();
    assert!(wire::put_cw_request(&mut md, &sizes), "metadata too small");
    let dw = IoDwords::compressed_write(slba, intra, nlb as u32);
    let cmd = wire::decode_write(opcode, dw, &data, &mut md).expect("decodes");
    let comp = d.submit(cmd);
    let feedback = wire::cw_feedback(&md, LBA as u64);
    Cw { comp, feedback }
}

struct Dr {
    status: Status,
    result: u64,
    data: Vec<u8>,
    sizes: Vec<(u32, u32)>,
}

/// A DR of the compressed range starting at zone byte `start` of zone 0 for `len` bytes, with an
/// output budget of `nlb` blocks.
fn dr(d: &mut Dev, zone_start: u64, start: u64, len: u64, multi: bool, nlb: u32) -> Dr {
    let slba = zone_start + start / LBA as u64;
    let intra = (start % LBA as u64) as u32;
    let end = start + len;
    let cnlb = (end.div_ceil(LBA as u64) - start / LBA as u64) as u32;
    let pdsz = (end.div_ceil(LBA as u64) * LBA as u64 - end) as u32;
    let mut data = vec![0xAAu8; nlb as usize * LBA];
    let mut md = vec![0u8; nlb as usize * d.ms()];
    let dw = IoDwords::decompressed_read(slba, intra, cnlb, pdsz, multi, nlb);
    let cmd = wire::decode_read(dw, &mut data, &mut md).expect("decodes");
    let comp = d.submit(cmd);
    let sizes = wire::dr_feedback(&md).unwrap_or_default();
    Dr {
        status: comp.status,
        result: comp.result,
        data,
        sizes,
    }
}

#[test]
fn single_chunk_round_trip_and_byte_write_pointer() {
    let mut d = cczns();
    let mut rng = Rng::new(1);
    let a = compressible(&mut rng, 4096, 4);
    let w = cw(&mut d, 0, 0, std::slice::from_ref(&a));
    assert_eq!(w.comp.status, Status::SUCCESS);
    let fb = w.feedback.unwrap();
    assert_eq!(fb.sizes.len(), 1);
    let size = fb.sizes[0] as u64;
    assert!(size < 1400, "ratio-4 data should shrink: {size}");
    assert_eq!(fb.written, size);
    assert_eq!(w.comp.result, size);
    let z = d.c.zone(0);
    assert_eq!(
        (z.byte_wp, z.wp, z.state),
        (size, 0, ZoneState::ImplicitlyOpened)
    );

    let r = dr(&mut d, 0, 0, size, false, 1);
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(r.result, 1);
    assert_eq!(r.sizes, vec![(4096, size as u32)]);
    assert_eq!(r.data, a);

    // The next CW must start at the byte write pointer.
    let b = compressible(&mut rng, 3000, 2);
    assert_eq!(
        cw(&mut d, 0, 0, std::slice::from_ref(&b)).comp.status,
        Status::ZONE_INVALID_WRITE
    );
    assert_eq!(
        cw(&mut d, 0, size as u32 + 1, std::slice::from_ref(&b))
            .comp
            .status,
        Status::ZONE_INVALID_WRITE
    );
    let w2 = cw(&mut d, 0, size as u32, std::slice::from_ref(&b));
    assert_eq!(w2.comp.status, Status::SUCCESS);
    let size2 = w2.feedback.unwrap().written;
    let r = dr(&mut d, 0, size, size2, false, 1);
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(&r.data[..3000], &b[..]);
    assert!(
        r.data[3000..].iter().all(|&x| x == 0),
        "the rest of the budget is zeroed"
    );

    // A plain write cannot start inside a block.
    assert_eq!(d.write(0, 1), Status::ZONE_INVALID_WRITE);
    let c = d.c.counters();
    assert_eq!((c.compressed_writes, c.decompressed_reads), (2, 2));
    assert_eq!(c.cw_logical_bytes, 7096);
    assert!(d.c.engine_counters().compress_requests == 2);
}

#[test]
fn multi_chunk_write_and_read_with_budgets() {
    let mut d = cczns();
    let mut rng = Rng::new(2);
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| compressible(&mut rng, 2048 + 256 * i, 1 + i % 4))
        .collect();
    let w = cw(&mut d, 0, 0, &chunks);
    assert_eq!(w.comp.status, Status::SUCCESS);
    let fb = w.feedback.unwrap();
    assert_eq!(fb.sizes.len(), 16);
    assert_eq!(fb.sizes.iter().map(|&s| s as u64).sum::<u64>(), fb.written);
    let offsets: Vec<u64> = fb
        .sizes
        .iter()
        .scan(0u64, |o, &s| {
            let here = *o;
            *o += s as u64;
            Some(here)
        })
        .collect();
    let all: Vec<u8> = chunks.concat();

    // The whole range, enough budget: every chunk.
    let r = dr(&mut d, 0, 0, fb.written, true, 32);
    assert_eq!((r.status, r.result), (Status::SUCCESS, 16));
    assert_eq!(&r.data[..all.len()], &all[..]);
    let expect: Vec<(u32, u32)> = chunks
        .iter()
        .zip(&fb.sizes)
        .map(|(c, &s)| (c.len() as u32, s))
        .collect();
    assert_eq!(r.sizes, expect);

    // A budget of 5 blocks: as many whole chunks as fit.
    let r = dr(&mut d, 0, 0, fb.written, true, 5);
    let fit = chunks
        .iter()
        .scan(0, |s, c| {
            *s += c.len();
            Some(*s)
        })
        .take_while(|&s| s <= 5 * LBA)
        .count();
    assert_eq!((r.status, r.result as usize), (Status::SUCCESS, fit));
    let n: usize = chunks[..fit].iter().map(Vec::len).sum();
    assert_eq!(&r.data[..n], &all[..n]);

    // Single-chunk DR of chunk 3; multi-chunk from chunk 3 over chunks 3-5.
    let r = dr(&mut d, 0, offsets[3], fb.sizes[3] as u64, false, 2);
    assert_eq!((r.status, r.result), (Status::SUCCESS, 1));
    assert_eq!(&r.data[..chunks[3].len()], &chunks[3][..]);
    let len = offsets[6] - offsets[3];
    let r = dr(&mut d, 0, offsets[3], len, true, 32);
    assert_eq!(
        r.result, 3,
        "a range ending at chunk 6's start returns 3, 4 and 5"
    );
    // A range that ends inside chunk 5: 3 and 4 only.
    let r = dr(&mut d, 0, offsets[3], len - 1, true, 32);
    assert_eq!(r.result, 2);
}

#[test]
fn illegal_decompressed_reads_are_refused() {
    let mut d = cczns();
    let mut rng = Rng::new(3);
    let chunks: Vec<Vec<u8>> = (0..4).map(|_| compressible(&mut rng, 4096, 2)).collect();
    let fb = cw(&mut d, 0, 0, &chunks).feedback.unwrap();
    let s0 = fb.sizes[0] as u64;
    // Not a chunk start.
    assert_eq!(dr(&mut d, 0, 1, s0, false, 1).status, Status::INVALID_FIELD);
    assert_eq!(
        dr(&mut d, 0, s0 + 7, 100, true, 4).status,
        Status::INVALID_FIELD
    );
    // The range cuts the first chunk.
    assert_eq!(
        dr(&mut d, 0, 0, s0 - 1, false, 1).status,
        Status::INVALID_FIELD
    );
    assert_eq!(
        dr(&mut d, 0, 0, s0 - 1, true, 4).status,
        Status::INVALID_FIELD
    );
    // Beyond the zone's data: nothing starts there.
    assert_eq!(
        dr(&mut d, 0, 60_000, 100, false, 1).status,
        Status::INVALID_FIELD
    );
    // Fields out of range.
    let mut data = vec![0u8; LBA];
    let mut md = vec![0u8; d.ms()];
    for dw in [
        IoDwords::decompressed_read(0, 4096, 1, 0, false, 1), // intra offset ≥ block
        IoDwords::decompressed_read(0, 0, 0, 0, false, 1),    // CNLB 0
        IoDwords::decompressed_read(0, 0, 1, 4096, false, 1), // PDSZ ≥ block
        IoDwords::decompressed_read(0, 100, 1, 4000, false, 1), // empty range [100, 96)
    ] {
        let cmd = wire::decode_read(dw, &mut data, &mut md).unwrap();
        assert_eq!(d.submit(cmd).status, Status::INVALID_FIELD, "{dw:?}");
    }
    // No metadata buffer.
    let cmd = Command::DecompressedRead {
        slba: 0,
        intra: 0,
        cnlb: 1,
        pdsz: 0,
        multi: false,
        nlb: 1,
        data: &mut data,
        metadata: &mut [],
    };
    assert_eq!(d.submit(cmd).status, Status::INVALID_FIELD);
    // A range crossing into the next zone.
    let zs = d.zslba(1);
    let dw = IoDwords::decompressed_read(zs - 1, 0, 2, 0, true, 1);
    let st = d
        .submit(wire::decode_read(dw, &mut data, &mut md).unwrap())
        .status;
    assert_eq!(st, Status::ZONE_BOUNDARY_ERROR);
}

#[test]
fn decompressed_read_budget_must_hold_the_first_chunk() {
    let mut d = cczns();
    let mut rng = Rng::new(4);
    let big = compressible(&mut rng, 6000, 3);
    let fb = cw(&mut d, 0, 0, std::slice::from_ref(&big))
        .feedback
        .unwrap();
    let r = dr(&mut d, 0, 0, fb.written, false, 1);
    assert_eq!(
        r.status,
        Status::INVALID_FIELD,
        "6000 bytes do not fit one block"
    );
    let r = dr(&mut d, 0, 0, fb.written, false, 2);
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(&r.data[..6000], &big[..]);
}

#[test]
fn bad_compressed_writes_change_nothing() {
    let mut d = cczns();
    let mut rng = Rng::new(5);
    let a = compressible(&mut rng, 4096, 2);
    let mut data = a.clone();
    let mut md = vec![0u8; d.ms()];
    let before = d.zones();
    let cases: Vec<(Vec<u32>, IoDwords, Status)> = vec![
        (
            vec![],
            IoDwords::compressed_write(0, 0, 1),
            Status::INVALID_FIELD,
        ), // N = 0
        (
            vec![0],
            IoDwords::compressed_write(0, 0, 1),
            Status::INVALID_FIELD,
        ), // empty chunk
        (
            vec![4097],
            IoDwords::compressed_write(0, 0, 1),
            Status::INVALID_FIELD,
        ), // beyond data
        (
            vec![4096],
            IoDwords::compressed_write(0, 5, 1),
            Status::ZONE_INVALID_WRITE,
        ),
        (
            vec![4096],
            IoDwords::compressed_write(1, 0, 1),
            Status::ZONE_INVALID_WRITE,
        ),
        (
            vec![4096],
            IoDwords::compressed_write(1 << 40, 0, 1),
            Status::LBA_OUT_OF_RANGE,
        ),
    ];
    for (sizes, dw, want) in cases {
        md.fill(0);
        wire::set_slot(&mut md, 0, sizes.len() as u32);
        for (i, s) in sizes.iter().enumerate() {
            wire::set_slot(&mut md, 1 + i, *s);
        }
        let cmd = wire::decode_write(wire::OPC_WRITE, dw, &data, &mut md).unwrap();
        assert_eq!(d.submit(cmd).status, want, "{sizes:?} {dw:?}");
    }
    // N larger than the metadata slots allow (16 slots: N + 3 must fit).
    md.fill(0);
    wire::set_slot(&mut md, 0, 14);
    let cmd = wire::decode_write(
        wire::OPC_WRITE,
        IoDwords::compressed_write(0, 0, 1),
        &data,
        &mut md,
    )
    .unwrap();
    assert_eq!(d.submit(cmd).status, Status::INVALID_FIELD);
    // No metadata buffer at all.
    let cmd = Command::CompressedWrite {
        slba: 0,
        intra: 0,
        nlb: 1,
        data: &data,
        metadata: &mut [],
        append: false,
    };
    assert_eq!(d.submit(cmd).status, Status::INVALID_FIELD);
    // Reserved bits.
    let mut dw = IoDwords::compressed_write(0, 0, 1);
    dw.cdw12 |= 1 << 20;
    assert_eq!(
        wire::decode_write(wire::OPC_WRITE, dw, &data, &mut md).err(),
        Some(Status::INVALID_FIELD)
    );
    assert_eq!(d.zones(), before, "no failed command changed a zone");
    assert_eq!(d.c.counters().compressed_writes, 0);

    // On a plain ZNS device the CC bit is refused.
    let mut plain = Dev::min();
    let mut md16 = vec![0u8; plain.ms()];
    wire::set_slot(&mut md16, 0, 1);
    wire::set_slot(&mut md16, 1, 4096);
    data.copy_from_slice(&a);
    let cmd = wire::decode_write(
        wire::OPC_WRITE,
        IoDwords::compressed_write(0, 0, 1),
        &data,
        &mut md16,
    )
    .unwrap();
    assert_eq!(plain.submit(cmd).status, Status::INVALID_FIELD);
}

#[test]
fn compressed_footprint_beyond_capacity_is_a_boundary_error() {
    let mut d = cczns();
    let mut rng = Rng::new(6);
    let cap = d.cap() * LBA as u64;
    // Fill the zone with random (incompressible) chunks.
    let mut at = 0u64;
    while cap - at >= 60_000 {
        let mut v = vec![0u8; 60_000];
        rng.fill(&mut v);
        let w = cw(
            &mut d,
            at / LBA as u64,
            (at % LBA as u64) as u32,
            std::slice::from_ref(&v),
        );
        assert_eq!(w.comp.status, Status::SUCCESS);
        assert_eq!(
            w.feedback.unwrap().written,
            60_000,
            "random data is stored raw"
        );
        at += 60_000;
    }
    let before = d.zones();
    let mut v = vec![0u8; 60_000];
    rng.fill(&mut v);
    let w = cw(
        &mut d,
        at / LBA as u64,
        (at % LBA as u64) as u32,
        std::slice::from_ref(&v),
    );
    assert_eq!(w.comp.status, Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.zones(), before);
    // Compressible data of the same size still fits.
    let small = compressible(&mut rng, 8000, 4);
    let w = cw(
        &mut d,
        at / LBA as u64,
        (at % LBA as u64) as u32,
        std::slice::from_ref(&small),
    );
    assert_eq!(w.comp.status, Status::SUCCESS);
}

#[test]
fn padding_zone_mixes_compressed_and_plain_writes() {
    let mut d = cczns();
    let mut rng = Rng::new(7);
    // Open zone 2 as a padding zone through the wire encoding (ZSASO).
    let z = d.zslba(2);
    let cmd = wire::decode_zone_send(z, 3 | wire::CDW13_ZSASO).unwrap();
    assert_eq!(d.submit(cmd).status, Status::SUCCESS);
    assert!(d.c.zone(2).padding);
    assert_eq!(d.state(2), ZoneState::ExplicitlyOpened);

    let chunks: Vec<Vec<u8>> = (0..3).map(|_| compressible(&mut rng, 4096, 3)).collect();
    let fb = cw(&mut d, z, 0, &chunks).feedback.unwrap();
    assert_eq!(
        fb.written % LBA as u64,
        0,
        "a padding zone ends every CW on a block"
    );
    let blocks = fb.written / LBA as u64;
    assert_eq!(d.c.zone(2).wp, z + blocks);
    // A plain write follows at the write pointer, then another CW.
    let (plain, m) = d.random(2);
    let st = d
        .submit(Command::Write {
            slba: z + blocks,
            nlb: 2,
            data: &plain,
            metadata: &m,
        })
        .status;
    assert_eq!(st, Status::SUCCESS);
    let more = compressible(&mut rng, 5000, 2);
    let fb2 = cw(&mut d, z + blocks + 2, 0, std::slice::from_ref(&more))
        .feedback
        .unwrap();
    assert_eq!(fb2.written % LBA as u64, 0);

    // Everything reads back: chunks by DR, the plain blocks by plain read.
    let r = dr(&mut d, z, 0, fb.written, true, 8);
    assert_eq!(r.result, 3);
    assert_eq!(&r.data[..3 * 4096], &chunks.concat()[..]);
    let (st, back) = d.read(z + blocks, 2);
    assert_eq!((st, back), (Status::SUCCESS, plain));
    let r = dr(&mut d, z, (blocks + 2) * LBA as u64, fb2.written, false, 2);
    assert_eq!(&r.data[..5000], &more[..]);
    // The last chunk's feedback carries the padding; DR reports it, the data is exact.
    assert_eq!(r.sizes, vec![(5000, fb2.written as u32)]);

    // Reset clears the type.
    assert_eq!(d.mgmt(2, ZoneAction::Reset), Status::SUCCESS);
    assert!(!d.c.zone(2).padding);
}

#[test]
fn padding_open_is_refused_where_it_cannot_apply() {
    let mut d = cczns();
    let mut rng = Rng::new(8);
    let a = compressible(&mut rng, 4096, 4);
    cw(&mut d, 0, 0, std::slice::from_ref(&a));
    assert_ne!(d.c.zone(0).byte_wp % LBA as u64, 0);
    let before = d.zones();
    assert_eq!(d.mgmt(0, ZoneAction::OpenPadding), Status::INVALID_FIELD);
    assert_eq!(d.zones(), before);
    let mut plain = Dev::min();
    assert_eq!(
        plain.mgmt(0, ZoneAction::OpenPadding),
        Status::INVALID_FIELD
    );
    // ZSASO with another action is not defined.
    assert_eq!(
        wire::decode_zone_send(0, 1 | wire::CDW13_ZSASO).err(),
        Some(Status::INVALID_FIELD)
    );
}

#[test]
fn incompressible_chunks_are_stored_raw_and_tiny_ones_padded() {
    let mut d = cczns();
    let mut rng = Rng::new(9);
    let mut random = vec![0u8; 4096];
    rng.fill(&mut random);
    let fb = cw(&mut d, 0, 0, std::slice::from_ref(&random))
        .feedback
        .unwrap();
    assert_eq!(fb.sizes, vec![4096]);
    let r = dr(&mut d, 0, 0, 4096, false, 1);
    assert_eq!(r.data, random);

    // 12 zero chunks of 64 bytes compress to a few bytes each; each takes at least the
    // minimum footprint, so no page holds more chunk starts than its OOB has records.
    let zeros: Vec<Vec<u8>> = (0..12).map(|_| vec![0u8; 64]).collect();
    let w = cw(&mut d, 1, 0, &zeros);
    assert_eq!(w.comp.status, Status::SUCCESS);
    let fb = w.feedback.unwrap();
    let page = d.c.layout().geometry.page_bytes;
    let records = (d.c.layout().geometry.oob_bytes_per_page - 8) / 16;
    assert!(
        fb.sizes.iter().all(|&s| s >= page.div_ceil(records)),
        "{:?}",
        fb.sizes
    );
    // One block of budget has 16 metadata slots: room for 7 (pre, feedback) pairs only.
    let r = dr(&mut d, 0, 4096, fb.written, true, 1);
    assert_eq!(r.result, 7);
    let r = dr(&mut d, 0, 4096, fb.written, true, 2);
    assert_eq!(r.result, 12);
    assert!(r.data[..768].iter().all(|&x| x == 0));
}

#[test]
fn compressed_zone_append_returns_the_byte_address() {
    let mut d = cczns();
    let mut rng = Rng::new(10);
    let z = d.zslba(3);
    let a = compressible(&mut rng, 4096, 2);
    let b = compressible(&mut rng, 4096, 4);
    let wa = cw_op(
        &mut d,
        wire::OPC_ZONE_APPEND,
        z,
        0,
        std::slice::from_ref(&a),
    );
    assert_eq!(wa.comp.status, Status::SUCCESS);
    assert_eq!(wa.comp.result, z * LBA as u64);
    let wb = cw_op(
        &mut d,
        wire::OPC_ZONE_APPEND,
        z,
        0,
        std::slice::from_ref(&b),
    );
    let sa = wa.feedback.unwrap().written;
    assert_eq!(wb.comp.result, z * LBA as u64 + sa);
    let r = dr(&mut d, z, sa, wb.feedback.unwrap().written, false, 1);
    assert_eq!(r.data, b);
    // Append names the zone start and no intra offset.
    assert_eq!(
        cw_op(
            &mut d,
            wire::OPC_ZONE_APPEND,
            z + 1,
            0,
            std::slice::from_ref(&a)
        )
        .comp
        .status,
        Status::INVALID_FIELD
    );
    assert_eq!(
        cw_op(
            &mut d,
            wire::OPC_ZONE_APPEND,
            z,
            8,
            std::slice::from_ref(&a)
        )
        .comp
        .status,
        Status::INVALID_FIELD
    );
}

#[test]
fn image_reopen_rebuilds_byte_write_pointers_from_oob() {
    let dir = std::env::temp_dir().join(format!("znslab-cczns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dev.img");
    let mut rng = Rng::new(11);
    let chunks: Vec<Vec<u8>> = (0..40)
        .map(|i| compressible(&mut rng, 3000 + 37 * i, 1 + i % 5))
        .collect();
    let (wps, fb) = {
        let mut d = Dev {
            c: Controller::create_image(&path, presets::test_cczns()).unwrap(),
            now: SimInstant::ZERO,
            rng: Rng::new(1),
        };
        let fb = cw(&mut d, 0, 0, &chunks[..20]).feedback.unwrap();
        let at = fb.written;
        let fb2 = cw(&mut d, at / 4096, (at % 4096) as u32, &chunks[20..])
            .feedback
            .unwrap();
        assert!(fb2.written > 0);
        // Zone 1: a padding zone with a plain write; zone 2: written then reset.
        assert_eq!(d.mgmt(1, ZoneAction::OpenPadding), Status::SUCCESS);
        let z1 = d.zslba(1);
        cw(&mut d, z1, 0, &chunks[..3]);
        let wp1 = d.c.zone(1).wp;
        assert_eq!(d.write(wp1, 1), Status::SUCCESS);
        let z2 = d.zslba(2);
        cw(&mut d, z2, 0, &chunks[..5]);
        assert_eq!(d.mgmt(2, ZoneAction::Reset), Status::SUCCESS);
        let wps: Vec<_> = d.zones();
        d.c.close().unwrap();
        let mut all = fb.sizes.clone();
        all.extend(fb2.sizes);
        (wps, all)
    };
    let mut d = Dev {
        c: Controller::open_image(&path).unwrap(),
        now: SimInstant::ZERO,
        rng: Rng::new(1),
    };
    assert_eq!(
        d.zones(),
        wps,
        "byte write pointers, states and types survive"
    );
    // Every chunk reads back by multi-chunk DR over the whole zone (in two budgets).
    let total: u64 = fb.iter().map(|&s| s as u64).sum();
    let r = dr(&mut d, 0, 0, total, true, 64);
    let n = r.result as usize;
    assert!(n >= 20);
    let want: Vec<u8> = chunks[..n].concat();
    assert_eq!(&r.data[..want.len()], &want[..]);
    let start: u64 = fb[..n].iter().map(|&s| s as u64).sum();
    let r = dr(&mut d, 0, start, total - start, true, 64);
    assert_eq!(r.result as usize, 40 - n);
    assert_eq!(
        &r.data[..chunks[n..].concat().len()],
        &chunks[n..].concat()[..]
    );
    // Writing goes on at the rebuilt byte write pointer.
    let w = cw(&mut d, total / 4096, (total % 4096) as u32, &chunks[..1]);
    assert_eq!(w.comp.status, Status::SUCCESS);
    // The reset zone kept no stale chunk.
    let z2 = d.zslba(2);
    assert_eq!(
        dr(&mut d, z2, 0, 100, false, 1).status,
        Status::INVALID_FIELD
    );
    drop(d);

    // A corrupted stored byte is an unrecovered read error, not wrong data.
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        // The first bytes of chunk 1 (compressed: its frame header).
        f.write_all_at(&[0xFF; 8], (1 << 20) + fb[0] as u64)
            .unwrap();
    }
    let mut d = Dev {
        c: Controller::open_image(&path).unwrap(),
        now: SimInstant::ZERO,
        rng: Rng::new(1),
    };
    let r = dr(&mut d, 0, fb[0] as u64, fb[1] as u64, false, 2);
    assert_eq!(r.status, Status::UNRECOVERED_READ_ERROR);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compression_raises_sequential_write_throughput() {
    // 64 KiB CWs of ratio-4 data against 64 KiB plain writes, one zone, QD1 back to back:
    // the CW stream programs a quarter of the pages.
    let mut rng = Rng::new(12);
    let chunk = compressible(&mut rng, 4096, 4);
    let chunks: Vec<Vec<u8>> = (0..16).map(|_| chunk.clone()).collect();
    let mut d = cczns();
    let cap = d.cap() * LBA as u64;
    let mut logical = 0u64;
    while d.c.zone(0).byte_wp + 65536 <= cap {
        let at = d.c.zone(0).byte_wp;
        let w = cw(&mut d, at / 4096, (at % 4096) as u32, &chunks);
        assert_eq!(w.comp.status, Status::SUCCESS);
        logical += 65536;
    }
    let cc_rate = logical as f64 / d.now.as_ns() as f64;
    let mut p = cczns();
    let mut lba = 0;
    while lba + 16 <= p.cap() {
        assert_eq!(p.write(lba, 16), Status::SUCCESS);
        lba += 16;
    }
    let plain_rate = (lba * 4096) as f64 / p.now.as_ns() as f64;
    assert!(
        cc_rate > 2.0 * plain_rate,
        "cc {cc_rate} vs plain {plain_rate} bytes/ns"
    );
}

/// The memo of decompressed chunks changes neither bytes nor time: the same reads on devices
/// with and without it end alike, a re-read is served from it, and a zone reset hides what the
/// zone held (new chunks at the same offsets read back new bytes).
#[test]
fn decompress_memo_changes_neither_bytes_nor_time_and_forgets_reset_zones() {
    let run = |memo: usize| {
        let mut d = cczns();
        d.c.set_decompress_memo_bytes(memo);
        let mut rng = Rng::new(5);
        let mut random = vec![0u8; 4096];
        rng.fill(&mut random);
        let first = vec![
            compressible(&mut rng, 4096, 4),
            random,
            compressible(&mut rng, 4096, 2),
        ];
        let w = cw(&mut d, 0, 0, &first);
        assert_eq!(w.comp.status, Status::SUCCESS);
        let len = w.feedback.unwrap().written;
        let mut seen = Vec::new();
        for _ in 0..3 {
            let r = dr(&mut d, 0, 0, len, true, 3);
            assert_eq!((r.status, r.result), (Status::SUCCESS, 3));
            assert_eq!(r.data, first.concat());
            seen.push((r.sizes, d.now));
        }
        assert_eq!(d.mgmt(0, ZoneAction::Reset), Status::SUCCESS);
        let second = vec![
            compressible(&mut rng, 4096, 4),
            compressible(&mut rng, 4096, 3),
        ];
        let w = cw(&mut d, 0, 0, &second);
        let len = w.feedback.unwrap().written;
        let r = dr(&mut d, 0, 0, len, true, 2);
        assert_eq!((r.status, r.result), (Status::SUCCESS, 2));
        assert_eq!(
            r.data,
            second.concat(),
            "a reset zone's old chunks are forgotten"
        );
        seen.push((r.sizes, d.now));
        (seen, d.c.decompress_memo_hits())
    };
    let (with, (hits, misses)) = run(1 << 20);
    let (without, (hits0, _)) = run(0);
    assert_eq!(with, without, "same feedback and completion times");
    assert_eq!(hits0, 0);
    // First read: 2 compressed chunks missed (the raw one is not memoised); the second misses
    // them again and keeps them (a chunk is kept the second time it is decompressed); the
    // third hits both; after the reset, 2 misses.
    assert_eq!((hits, misses), (2, 6));
}

/// With a modeled payload (values are runs of one byte, sizes drawn from a codec's measured
/// distribution) a DR decodes the stored encoding every time instead of keeping chunks in the
/// memo (decoding runs costs what copying from the memo would, and the memo's copies were
/// most of a modeled scan's wall time); the bytes come back the same on every read.
#[test]
fn a_modeled_payload_reads_back_without_the_memo() {
    use codec::modeled::{CodecSizes, SizeModel, VALUE};
    use codec::{Codec, Modeled};
    use std::sync::Arc;
    // Every codec stores half of what it is given, at every size and quantile.
    let model = SizeModel {
        dataset: "test".into(),
        corpus_len: 0,
        corpus_xxh3: 0,
        codecs: [Codec::ZSTD1, Codec::Deflate(1), Codec::Lz4, Codec::Snappy]
            .into_iter()
            .map(|codec| CodecSizes {
                codec,
                ratios: vec![vec![0.5; 65]; 11],
            })
            .collect(),
    };
    model.validate().unwrap();
    let mut d = cczns();
    d.c.set_decompress_memo_bytes(1 << 20);
    d.c.set_payload_model(Some(&Modeled(Arc::new(model))));
    // Sizing the memo after the model leaves it off too (either order).
    d.c.set_decompress_memo_bytes(1 << 20);
    // Records: a key, then a value that is a run of VALUE.
    let chunk = |k: u8| {
        let mut v = Vec::new();
        while v.len() < 4096 {
            v.extend_from_slice(&[k, k.wrapping_mul(7), 1, 2, 3, 4, 5]);
            v.extend(std::iter::repeat_n(VALUE, 200.min(4096 - v.len())));
        }
        v.truncate(4096);
        v
    };
    let chunks = vec![chunk(1), chunk(2), chunk(3)];
    let w = cw(&mut d, 0, 0, &chunks);
    assert_eq!(w.comp.status, Status::SUCCESS);
    let len = w.feedback.unwrap().written;
    assert!(
        len < 3 * 4096,
        "stored {len} bytes: the model's sizes, not the raw ones"
    );
    for _ in 0..3 {
        let r = dr(&mut d, 0, 0, len, true, 3);
        assert_eq!((r.status, r.result), (Status::SUCCESS, 3));
        assert_eq!(r.data, chunks.concat());
    }
    assert_eq!(d.c.decompress_memo_hits(), (0, 0), "the memo is not used");
}
